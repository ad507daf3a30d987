// A JSON schema rendered readably: a type line (arrays, unions, enums, constants) with its
// constraints, and for objects a nested list of properties with required marks; `additionalProperties`
// open or closed is said in words. Depth is bounded (a recursive schema stops with "…").
import type { JsonSchema, OpenApiDoc } from './openapi-types.ts';
import { constraintsOf, objectPartsOf, resolve, typeLabel } from './openapi-types.ts';

const MAX_DEPTH = 8;

export function SchemaType(props: { doc: OpenApiDoc; schema: JsonSchema }) {
  const s = resolve(props.doc, props.schema);
  const constraints = constraintsOf(s);
  return (
    <span class="schema-type">
      <code>{typeLabel(props.doc, s)}</code>
      {constraints.length > 0 && <span class="schema-constraints"> ({constraints.join(', ')})</span>}
    </span>
  );
}

function Properties(props: { doc: OpenApiDoc; schema: JsonSchema; depth: number }) {
  const { doc, schema, depth } = props;
  const required = new Set(schema.required ?? []);
  const entries = Object.entries(schema.properties ?? {});
  return (
    <ul class="schema-props">
      {entries.map(([name, raw]) => {
        const p = resolve(doc, raw);
        return (
          <li key={name}>
            <code class="schema-name">{name}</code>
            {required.has(name) ? (
              <span class="schema-required" title="required">
                {' '}
                required
              </span>
            ) : (
              <span class="schema-optional"> optional</span>
            )}{' '}
            <SchemaType doc={doc} schema={p} />
            {p.description && <span class="schema-desc"> — {p.description}</span>}
            <Nested doc={doc} schema={p} depth={depth + 1} />
          </li>
        );
      })}
      {schema.additionalProperties === false && <li class="schema-note">no other fields</li>}
      {entries.length === 0 && schema.additionalProperties !== false && (
        <li class="schema-note">any fields</li>
      )}
    </ul>
  );
}

function Nested(props: { doc: OpenApiDoc; schema: JsonSchema; depth: number }) {
  const parts = objectPartsOf(props.doc, props.schema);
  if (!parts.length) return null;
  if (props.depth > MAX_DEPTH) return <span class="schema-note"> …</span>;
  return (
    <>
      {parts.map((part, i) => (
        <div key={i} class="schema-nested">
          {parts.length > 1 && <div class="schema-note">variant {i + 1}</div>}
          <Properties doc={props.doc} schema={part} depth={props.depth} />
        </div>
      ))}
    </>
  );
}

/** A whole schema: its type line, then its fields (for an object, an array of objects, a union). */
export function SchemaView(props: { doc: OpenApiDoc; schema: JsonSchema }) {
  const s = resolve(props.doc, props.schema);
  return (
    <div class="schema">
      <SchemaType doc={props.doc} schema={s} />
      {s.description && <span class="schema-desc"> — {s.description}</span>}
      <Nested doc={props.doc} schema={s} depth={0} />
    </div>
  );
}
