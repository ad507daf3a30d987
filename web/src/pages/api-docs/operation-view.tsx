// One operation of the reference page, opened: authentication, description, parameters, request
// body (per media type) and responses (per status, with their schemas).
import type { OpenApiDoc, OperationEntry } from './openapi-types.ts';
import { authOf, resolve } from './openapi-types.ts';
import { SchemaType, SchemaView } from './schema-view.tsx';

export function OperationView(props: { doc: OpenApiDoc; entry: OperationEntry }) {
  const { doc, entry } = props;
  const { op } = entry;
  const params = op.parameters ?? [];
  return (
    <div class="op-body">
      <p>
        <strong>Authentication:</strong> {authOf(doc, op)}
        {op['x-requires'] && <> · requires {op['x-requires']}</>}
      </p>
      {op.description && <p>{op.description}</p>}
      <h4>Parameters</h4>
      {params.length === 0 ? (
        <p class="schema-note">None</p>
      ) : (
        <table class="op-params">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">In</th>
              <th scope="col">Required</th>
              <th scope="col">Type</th>
            </tr>
          </thead>
          <tbody>
            {params.map((p) => (
              <tr key={`${p.in} ${p.name}`}>
                <td>
                  <code>{p.name}</code>
                </td>
                <td>{p.in}</td>
                <td>{p.required ? 'yes' : 'no'}</td>
                <td>
                  {p.schema ? <SchemaType doc={doc} schema={p.schema} /> : 'any'}
                  {(p.description ?? p.schema?.description) && (
                    <span class="schema-desc"> — {p.description ?? p.schema?.description}</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {op.requestBody && (
        <>
          <h4>Request body{op.requestBody.required ? ' (required)' : ''}</h4>
          {op.requestBody.description && <p>{op.requestBody.description}</p>}
          {Object.entries(op.requestBody.content ?? {}).map(([type, media]) => (
            <div key={type} class="op-media">
              <div class="op-media-type">{type}</div>
              {media.schema && <SchemaView doc={doc} schema={media.schema} />}
            </div>
          ))}
        </>
      )}
      <h4>Responses</h4>
      <dl class="op-responses">
        {Object.entries(op.responses ?? {}).map(([status, raw]) => {
          const r = resolve(doc, raw);
          return (
            <div key={status} class="op-response">
              <dt>
                <span class={`status status-${status[0]}xx`}>{status}</span> {r.description}
              </dt>
              <dd>
                {Object.entries(r.content ?? {}).map(([type, media]) => (
                  <div key={type} class="op-media">
                    <div class="op-media-type">{type}</div>
                    {media.schema && <SchemaView doc={doc} schema={media.schema} />}
                  </div>
                ))}
              </dd>
            </div>
          );
        })}
      </dl>
    </div>
  );
}
