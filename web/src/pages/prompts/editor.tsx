// Create or edit a prompt template (/prompts/new, /prompts/:id): name, description, category, text,
// tags, variables (filled from the text's {{placeholders}} on request), tenant visibility. Checked here
// as the API checks (prompt-form.ts) and the API's own refusals are shown in words. A saved template can
// be tried: values for its variables, POST /api/prompts/:id/render, the rendered text shown.
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../../api/client.ts';
import { useAuth } from '../../auth/session.tsx';
import { Button, ErrorBox, Field, formatNumber, Loading } from '../../ui/index.ts';
import { TextareaField } from '../../ui/textarea-field.tsx';
import { useLoad } from '../../ui/use-load.ts';
import {
  bodyOf,
  EMPTY_FORM,
  type FormErrors,
  formOf,
  type PromptForm,
  type PromptTemplate,
  placeholdersIn,
  splitList,
  variableName,
} from './prompt-form.ts';
import './prompts.css';

const ADMIN_ROLES = new Set(['platform_admin', 'tenant_admin', 'admin']);

function TryIt({ template }: { template: PromptTemplate }) {
  const names = template.variables.map(variableName);
  const [values, setValues] = useState<Record<string, string>>({});
  const [result, setResult] = useState<{ rendered: string; use_count: number } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const onSubmit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await api.post<{ rendered: string; use_count: number }>(
        `/api/prompts/${template.id}/render`,
        { variables: values },
      );
      setResult(r);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="try-h">
      <h2 id="try-h">Try it</h2>
      <form onSubmit={onSubmit}>
        {names.length === 0 && <p class="muted">This template declares no variables.</p>}
        {names.map((n) => (
          <Field
            key={n}
            label={n}
            value={values[n] ?? ''}
            onValue={(v) => setValues((x) => ({ ...x, [n]: v }))}
          />
        ))}
        <ErrorBox error={error} />
        <Button type="submit" busy={busy}>
          Render
        </Button>
      </form>
      {result !== null && (
        <>
          <h3>Rendered</h3>
          <pre class="rendered">{result.rendered}</pre>
          <p class="muted">Used {formatNumber(result.use_count)} times so far.</p>
        </>
      )}
    </section>
  );
}

export default function PromptEditor({ id }: { id?: string }) {
  const isNew = id === undefined;
  const { user } = useAuth();
  const { route } = useLocation();
  const loaded = useLoad(
    (signal) =>
      isNew
        ? Promise.resolve(null)
        : api
            .get<{ template: PromptTemplate }>(`/api/prompts/${encodeURIComponent(id)}`, { signal })
            .then((r) => r.template),
    [id],
  );
  const template = loaded.data ?? null;
  const [form, setForm] = useState<PromptForm>(EMPTY_FORM);
  const [errors, setErrors] = useState<FormErrors>({});
  const [saveError, setSaveError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    setForm(template ? formOf(template) : EMPTY_FORM);
    setErrors({});
  }, [template]);

  const readOnly =
    !!template && !!user && template.author_id !== user.id && !user.is_admin && !ADMIN_ROLES.has(user.role);
  const set =
    <K extends keyof PromptForm>(k: K) =>
    (v: PromptForm[K]) => {
      setSaved(false);
      setForm((f) => ({ ...f, [k]: v }));
    };

  const onSubmit = async (e: Event) => {
    e.preventDefault();
    setSaveError(null);
    setSaved(false);
    const r = bodyOf(form, template?.variables);
    if (r.errors) {
      setErrors(r.errors);
      return;
    }
    setErrors({});
    setBusy(true);
    try {
      if (isNew) {
        const res = await api.post<{ template: PromptTemplate }>('/api/prompts', r.body);
        route(`/prompts/${res.template.id}`);
      } else {
        const res = await api.put<{ template: PromptTemplate }>(`/api/prompts/${template!.id}`, r.body);
        loaded.setData(() => res.template);
        setSaved(true);
      }
    } catch (err) {
      setSaveError(err);
    } finally {
      setBusy(false);
    }
  };

  const fillVariables = () => {
    const names = [...new Set([...splitList(form.variables), ...placeholdersIn(form.content)])];
    set('variables')(names.join(', '));
  };

  const title = isNew ? 'New prompt template' : (template?.name ?? 'Prompt template');
  return (
    <section class="editor">
      <p>
        <a href="/prompts">All templates</a>
      </p>
      <h1>{title}</h1>
      <ErrorBox error={loaded.error} />
      {loaded.loading && !isNew && !template && <Loading />}
      {(isNew || template) && (
        <>
          {template && (
            <p class="muted">
              Used {formatNumber(template.use_count)} {template.use_count === 1 ? 'time' : 'times'}.
              {readOnly && ' Only its author or an administrator can change it.'}
            </p>
          )}
          <form onSubmit={onSubmit} aria-label={title} noValidate>
            <Field label="Name" value={form.name} onValue={set('name')} error={errors.name} required />
            <Field
              label="Description"
              value={form.description}
              onValue={set('description')}
              error={errors.description}
            />
            <Field label="Category" value={form.category} onValue={set('category')} error={errors.category} />
            <TextareaField
              label="Template text"
              value={form.content}
              onValue={set('content')}
              error={errors.content}
              rows={10}
              hint="Placeholders look like {{name}}."
              required
              readOnly={readOnly}
            />
            <Field
              label="Variables"
              value={form.variables}
              onValue={set('variables')}
              error={errors.variables}
              hint="Comma-separated names."
            />
            <Button variant="link" onClick={fillVariables} disabled={readOnly}>
              Fill variables from the text
            </Button>
            <Field
              label="Tags"
              value={form.tags}
              onValue={set('tags')}
              error={errors.tags}
              hint="Comma-separated."
            />
            <label class="check">
              <input
                type="checkbox"
                checked={form.is_public}
                onChange={(e) => set('is_public')(e.currentTarget.checked)}
                disabled={readOnly}
              />
              Visible to everyone in my tenant
            </label>
            <ErrorBox error={saveError} />
            {saved && (
              <p class="notice" role="status">
                Saved.
              </p>
            )}
            {!readOnly && (
              <div class="form-actions">
                <Button type="submit" variant="primary" busy={busy}>
                  {isNew ? 'Create template' : 'Save changes'}
                </Button>
                <a class="btn" href="/prompts">
                  Cancel
                </a>
              </div>
            )}
          </form>
          {template && <TryIt template={template} />}
        </>
      )}
    </section>
  );
}
