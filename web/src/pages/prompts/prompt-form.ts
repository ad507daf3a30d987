// The prompt template editor's logic, pure (test/unit/web-prompts-form.test.ts): the form's fields
// from a template, the POST/PUT body from the form (or the errors, checked as the API checks them:
// name 1..200, content required, category 1..50, tags 1..50 characters each and at most 50, variable
// names a letter or _ then letters, digits, _ . - up to 64), the placeholders `{{name}}` a content
// uses, and rendering values for POST /api/prompts/:id/render.

export type PromptVariable = string | { name: string; description?: string; default?: string };

export interface PromptTemplate {
  id: number;
  name: string;
  description: string | null;
  category: string;
  content: string;
  variables: PromptVariable[];
  tags: string[];
  author_id: number;
  tenant_id: number | null;
  is_public: boolean;
  is_featured: boolean;
  use_count: number;
  created_at: string;
  updated_at: string;
}

export interface PromptForm {
  name: string;
  description: string;
  category: string;
  content: string;
  /** Comma-separated. */
  tags: string;
  /** Comma-separated variable names. */
  variables: string;
  is_public: boolean;
}

export interface PromptBody {
  name: string;
  description: string | null;
  category: string;
  content: string;
  tags: string[];
  variables: PromptVariable[];
  is_public: boolean;
}

export const EMPTY_FORM: PromptForm = {
  name: '',
  description: '',
  category: 'general',
  content: '',
  tags: '',
  variables: '',
  is_public: false,
};

const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const MAX_NAME = 64;
export const isVariableName = (s: string) => s.length <= MAX_NAME && NAME.test(s);
export const variableName = (v: PromptVariable) => (typeof v === 'string' ? v : v.name);

export function formOf(t: PromptTemplate): PromptForm {
  return {
    name: t.name,
    description: t.description ?? '',
    category: t.category,
    content: t.content,
    tags: t.tags.join(', '),
    variables: t.variables.map(variableName).join(', '),
    is_public: t.is_public,
  };
}

/** Comma-separated items, trimmed, empty ones dropped, first occurrence kept. */
export function splitList(s: string): string[] {
  return [
    ...new Set(
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  ];
}

export type FormErrors = Partial<Record<keyof PromptForm, string>>;

/**
 * The API body of a form, or the errors by field. `previous` variables keep their description and
 * default when their name stays.
 */
export function bodyOf(
  f: PromptForm,
  previous: PromptVariable[] = [],
): { body: PromptBody; errors?: undefined } | { body?: undefined; errors: FormErrors } {
  const errors: FormErrors = {};
  const name = f.name.trim();
  const category = f.category.trim() || 'general';
  if (!name) errors.name = 'A name is required';
  else if (name.length > 200) errors.name = 'At most 200 characters';
  if (!f.content.trim()) errors.content = 'The template text is required';
  else if (f.content.length > 100_000) errors.content = 'At most 100,000 characters';
  if (category.length > 50) errors.category = 'At most 50 characters';
  if (f.description.length > 2000) errors.description = 'At most 2,000 characters';
  const tags = splitList(f.tags);
  if (tags.length > 50) errors.tags = 'At most 50 tags';
  else if (tags.some((t) => t.length > 50)) errors.tags = 'Each tag at most 50 characters';
  const names = splitList(f.variables);
  const bad = names.filter((n) => !isVariableName(n));
  if (bad.length)
    errors.variables = `Not a variable name: ${bad.join(', ')} (a letter or _ then letters, digits, _ . -)`;
  else if (names.length > 100) errors.variables = 'At most 100 variables';
  if (Object.keys(errors).length) return { errors };
  const byName = new Map(previous.map((v) => [variableName(v), v]));
  return {
    body: {
      name,
      description: f.description.trim() ? f.description : null,
      category,
      content: f.content,
      tags,
      variables: names.map((n) => byName.get(n) ?? n),
      is_public: f.is_public,
    },
  };
}

/**
 * The distinct placeholder names `{{ name }}` in `content`, in order of first use. Linear: each `{{`
 * looks for its `}}` only within a short window, as the server's renderer does.
 */
export function placeholdersIn(content: string): string[] {
  const found: string[] = [];
  let from = 0;
  for (;;) {
    const open = content.indexOf('{{', from);
    if (open < 0) break;
    const window = content.slice(open + 2, open + 2 + MAX_NAME + 32);
    const close = window.indexOf('}}');
    const name = close < 0 ? '' : window.slice(0, close).trim();
    if (name && isVariableName(name)) {
      if (!found.includes(name)) found.push(name);
      from = open + 2 + close + 2;
    } else from = open + 1;
  }
  return found;
}
