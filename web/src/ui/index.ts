// The UI kit in one import: `import { Button, Field, Table, ... } from '../../ui/index.ts'`.
export { Button } from './button.tsx';
export { CheckField } from './check-field.tsx';
export { ConfirmButton, ConfirmPrompt } from './confirm.tsx';
export { ErrorBox, Loading, ProgressBar } from './feedback.tsx';
export { Field } from './field.tsx';
export { FieldFrame, useFieldIds } from './field-frame.tsx';
export * from './format.ts';
export { Loaded } from './loaded.tsx';
export { Pager } from './pager.tsx';
export { type Option, SelectField } from './select-field.tsx';
export { type Column, Table } from './table.tsx';
export { TextareaField } from './textarea-field.tsx';
export { useAction } from './use-action.ts';
export { type Loaded as LoadedRead, useLoad } from './use-load.ts';
export { type Submit, useSubmit } from './use-submit.ts';
