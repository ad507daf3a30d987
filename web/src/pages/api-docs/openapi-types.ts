// The parts of an OpenAPI 3.1 document (GET /api/openapi.json) that the reference page reads, and the
// pure helpers it needs: operations grouped by tag, the filter, `$ref` resolution, and a JSON schema
// summarised in words (type, enum, constraints). No rendering here (schema-view.tsx renders).

export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  [k: string]: unknown;
};

export interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
}
export interface MediaContent {
  schema?: JsonSchema;
}
export interface Response {
  $ref?: string;
  description?: string;
  content?: Record<string, MediaContent>;
}
export interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; description?: string; content?: Record<string, MediaContent> };
  responses?: Record<string, Response>;
  'x-requires'?: string;
  [k: string]: unknown;
}
export interface OpenApiDoc {
  info?: { title?: string; version?: string };
  paths: Record<string, Record<string, Operation>>;
  components?: {
    schemas?: Record<string, JsonSchema>;
    responses?: Record<string, Response>;
    securitySchemes?: Record<
      string,
      { type?: string; scheme?: string; in?: string; name?: string; description?: string }
    >;
  };
}

export const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

export interface OperationEntry {
  key: string;
  method: string;
  path: string;
  tag: string;
  op: Operation;
}

/** Every operation, sorted by path then method. */
export function operationsOf(doc: OpenApiDoc): OperationEntry[] {
  const out: OperationEntry[] = [];
  for (const path of Object.keys(doc.paths).sort())
    for (const method of METHODS) {
      const op = doc.paths[path]?.[method];
      if (op) out.push({ key: `${method} ${path}`, method, path, tag: op.tags?.[0] ?? 'other', op });
    }
  return out;
}

/** Case-insensitive: every word of the filter appears in the method, path, tag, summary or id. */
export function matchesFilter(e: OperationEntry, filter: string): boolean {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const hay = `${e.method} ${e.path} ${e.tag} ${e.op.summary ?? ''} ${e.op.operationId ?? ''}`.toLowerCase();
  return words.every((w) => hay.includes(w));
}

/** Operations grouped by tag, tags sorted. */
export function byTag(entries: OperationEntry[]): [string, OperationEntry[]][] {
  const groups = new Map<string, OperationEntry[]>();
  for (const e of entries) groups.set(e.tag, [...(groups.get(e.tag) ?? []), e]);
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
}

/** Follows `#/components/...` references (at most a few hops); unknown ones stay as they are. */
export function resolve<T extends { $ref?: string }>(doc: OpenApiDoc, value: T): T {
  let v = value;
  for (let hops = 0; v?.$ref && hops < 5; hops++) {
    const parts = v.$ref.replace(/^#\//, '').split('/');
    let next: unknown = doc;
    for (const p of parts) next = (next as Record<string, unknown> | undefined)?.[p];
    if (!next) break;
    v = next as T;
  }
  return v;
}

/** The security schemes an operation accepts, as words ("public" when none). */
export function authOf(doc: OpenApiDoc, op: Operation): string {
  const names = [...new Set((op.security ?? []).flatMap((s) => Object.keys(s)))];
  if (!names.length) return 'public (no credentials)';
  return names
    .map((n) => {
      const s = doc.components?.securitySchemes?.[n];
      if (!s) return n;
      const how = s.type === 'http' ? `${s.scheme ?? 'http'} header` : `${s.in ?? ''} ${s.name ?? ''}`.trim();
      return `${n} (${how})`;
    })
    .join(', ');
}

const show = (v: unknown) => JSON.stringify(v);

/** The constraints of a schema in words: "1..90", "max 100 chars", "pattern ^a$", "default 7". */
export function constraintsOf(s: JsonSchema): string[] {
  const out: string[] = [];
  if (s.format) out.push(`format ${s.format}`);
  const lo = s.minimum ?? s.exclusiveMinimum;
  const hi = s.maximum ?? s.exclusiveMaximum;
  // zod writes the safe-integer bounds on every integer: they say nothing to a reader.
  const huge = (n: number | undefined) => n !== undefined && Math.abs(n) >= Number.MAX_SAFE_INTEGER;
  if (lo !== undefined && !huge(lo) && hi !== undefined && !huge(hi)) out.push(`${lo}..${hi}`);
  else if (lo !== undefined && !huge(lo)) out.push(`≥ ${lo}`);
  else if (hi !== undefined && !huge(hi)) out.push(`≤ ${hi}`);
  if (s.minLength !== undefined && s.minLength > 0) out.push(`min ${s.minLength} chars`);
  if (s.maxLength !== undefined) out.push(`max ${s.maxLength} chars`);
  if (s.minItems !== undefined && s.minItems > 0) out.push(`min ${s.minItems} items`);
  if (s.maxItems !== undefined) out.push(`max ${s.maxItems} items`);
  if (s.pattern) out.push(`pattern ${s.pattern}`);
  if (s.default !== undefined) out.push(`default ${show(s.default)}`);
  return out;
}

/** A one-line type label: "string", "integer | null", "array of object", "enum: a, b", "const x". */
export function typeLabel(doc: OpenApiDoc, raw: JsonSchema): string {
  const s = resolve(doc, raw);
  if (s.const !== undefined) return `= ${show(s.const)}`;
  if (s.enum) return `one of ${s.enum.map(show).join(', ')}`;
  const union = s.anyOf ?? s.oneOf;
  if (union) return union.map((u) => typeLabel(doc, u)).join(' | ');
  if (s.allOf) return s.allOf.map((u) => typeLabel(doc, u)).join(' & ');
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (!types.length) return s.properties ? 'object' : 'any';
  return types.map((t) => (t === 'array' && s.items ? `array of ${typeLabel(doc, s.items)}` : t)).join(' | ');
}

/** The object schemas nested in a schema (its own, an array's items, union members), for rendering. */
export function objectPartsOf(doc: OpenApiDoc, raw: JsonSchema): JsonSchema[] {
  const s = resolve(doc, raw);
  if (s.properties) return [s];
  if (s.items) return objectPartsOf(doc, s.items);
  return [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])].flatMap((u) => objectPartsOf(doc, u));
}
