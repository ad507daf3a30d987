// Prompt template rendering, pure (spec document 2, "Workspace (prompts and sessions)"; issue 11
// item 6). A placeholder is `{{name}}` (spaces allowed inside the braces; a name is a letter or `_`
// followed by letters, digits, `_`, `.` or `-`, at most 64 characters). Rendering is one left-to-right
// pass: each placeholder is replaced by its value and the output is never scanned again, so a value
// containing `{{other}}` stays literal text (no template injection) and nothing is ever evaluated.
// The scanner looks for the closing `}}` only within a bounded window after each `{{`, so the work is
// linear in the template length whatever the input.
import { BadRequestError } from '../errors.ts';

export const MAX_VARIABLE_NAME = 64;
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
// `{{` + spaces + name + spaces + `}}`: the closing braces must appear within this many characters.
const WINDOW = MAX_VARIABLE_NAME + 32;

/** A declared variable: a bare name, or a name with a description and a default value. */
export type PromptVariable = string | { name: string; description?: string; default?: string };

type Piece = { text: string } | { name: string };

function scan(content: string): Piece[] {
  const out: Piece[] = [];
  let from = 0;
  let literalStart = 0;
  while (from < content.length) {
    const open = content.indexOf('{{', from);
    if (open < 0) break;
    const window = content.slice(open + 2, open + 2 + WINDOW);
    const close = window.indexOf('}}');
    const name = close < 0 ? '' : window.slice(0, close).trim();
    if (name && name.length <= MAX_VARIABLE_NAME && NAME.test(name)) {
      if (open > literalStart) out.push({ text: content.slice(literalStart, open) });
      out.push({ name });
      from = literalStart = open + 2 + close + 2;
    } else {
      from = open + 1;
    }
  }
  if (literalStart < content.length) out.push({ text: content.slice(literalStart) });
  return out;
}

/** The placeholder names of `content`, each once, in order of first appearance. */
export function placeholderNames(content: string): string[] {
  const seen = new Set<string>();
  for (const p of scan(content)) if ('name' in p) seen.add(p.name);
  return [...seen];
}

export const variableName = (v: PromptVariable) => (typeof v === 'string' ? v : v.name);

/**
 * Renders `content` with `values`, falling back to the declared variables' defaults. Every
 * placeholder must get a value: the first missing one is a 400 naming it (all missing ones are listed
 * in `missing`).
 */
export function renderPrompt(
  content: string,
  values: Readonly<Record<string, string>>,
  declared: readonly PromptVariable[] = [],
): { rendered: string; used: string[] } {
  const defaults = new Map<string, string>();
  for (const v of declared)
    if (typeof v !== 'string' && v.default !== undefined) defaults.set(v.name, v.default);
  const pieces = scan(content);
  const lookup = (name: string) => (Object.hasOwn(values, name) ? values[name] : defaults.get(name));
  const missing = [
    ...new Set(pieces.flatMap((p) => ('name' in p && lookup(p.name) === undefined ? [p.name] : []))),
  ];
  if (missing.length > 0) throw new BadRequestError(`Missing variable: ${missing[0]}`, { missing });
  const used = new Set<string>();
  const rendered = pieces
    .map((p) => {
      if ('text' in p) return p.text;
      used.add(p.name);
      return lookup(p.name)!;
    })
    .join('');
  return { rendered, used: [...used] };
}

/** Whether `name` is a valid variable name (for validating declared variables at the edge). */
export const isVariableName = (name: string) => name.length <= MAX_VARIABLE_NAME && NAME.test(name);
