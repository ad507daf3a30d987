// The UI kit in one import: `import { Button, Field, Table, ... } from '../../ui/index.ts'`.
export { Button } from './button.tsx';
export { ErrorBox, Loading, ProgressBar } from './feedback.tsx';
export { Field } from './field.tsx';
export * from './format.ts';
export { type Column, Table } from './table.tsx';
