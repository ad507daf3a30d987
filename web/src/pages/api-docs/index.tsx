// The API reference (issue 16 item 1): the OpenAPI document of this server (GET /api/openapi.json,
// public) listed by tag, each operation with its method, path and summary; opening one shows its
// authentication, parameters, request body and responses with their schemas (operation-view.tsx).
// A filter box narrows by method, path, tag, summary or operation id. A small renderer of our own:
// no Swagger UI (this page is a lazy chunk under the app's JS budget).
import { useMemo, useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { Field, Loaded, useLoad } from '../../ui/index.ts';
import { byTag, matchesFilter, type OpenApiDoc, operationsOf } from './openapi-types.ts';
import { OperationView } from './operation-view.tsx';
import './api-docs.css';

export default function ApiDocs() {
  const load = useLoad((signal) => api.get<OpenApiDoc>('/api/openapi.json', { signal }), []);
  const [filter, setFilter] = useState('');
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const doc = load.data;
  const all = useMemo(() => (doc ? operationsOf(doc) : []), [doc]);
  const shown = useMemo(() => all.filter((e) => matchesFilter(e, filter)), [all, filter]);
  const toggle = (key: string, isOpen: boolean) =>
    setOpen((prev) => {
      const next = new Set(prev);
      if (isOpen) next.add(key);
      else next.delete(key);
      return next;
    });

  return (
    <section class="api-docs">
      <h1>API reference</h1>
      <p>
        {doc?.info?.title ?? 'The REST API'}
        {doc?.info?.version ? ` · version ${doc.info.version}` : ''} · the machine-readable document is{' '}
        <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1).
      </p>
      <Loaded of={load}>
        {doc && (
          <>
            <div class="api-filter">
              <Field
                label="Filter operations"
                value={filter}
                onValue={setFilter}
                placeholder="e.g. get remote sessions"
                hint={`${shown.length} of ${all.length} operations`}
              />
            </div>
            {byTag(shown).map(([tag, entries]) => (
              <section key={tag} class="api-tag" aria-labelledby={`tag-${tag}`}>
                <h2 id={`tag-${tag}`}>
                  {tag} <span class="api-count">({entries.length})</span>
                </h2>
                {entries.map((e) => (
                  <details
                    key={e.key}
                    class="op"
                    data-operation={e.key}
                    open={open.has(e.key)}
                    onToggle={(ev) => toggle(e.key, (ev.currentTarget as HTMLDetailsElement).open)}
                  >
                    <summary>
                      <span class={`method method-${e.method}`}>{e.method.toUpperCase()}</span>{' '}
                      <code class="op-path">{e.path}</code>
                      {e.op.summary && <span class="op-summary"> {e.op.summary}</span>}
                    </summary>
                    {open.has(e.key) && <OperationView doc={doc} entry={e} />}
                  </details>
                ))}
              </section>
            ))}
            {shown.length === 0 && <p>No operation matches the filter.</p>}
          </>
        )}
      </Loaded>
    </section>
  );
}
