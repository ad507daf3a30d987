// Create an autonomous workflow (POST /api/autonomous/workflows): one requirement (text, an issue URL
// or an issue number) or a batch of several (one per line, run one at a time on one baseline), the
// project path (a Git repository in the tenant's folder under the server's SVC_AUTONOMOUS_PROJECT_ROOTS), the CLI tool, model
// and branch strategy. Empty required fields are caught here; the API judges the rest and its 400
// naming the field is shown in words (a CLI that is not installed on the server is refused here, with
// what to install). The project path's hint shows the caller's own folder(s) from the API. On success
// the new workflow's page opens (a batch: its first).

import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../../api/client.ts';
import { Button, ErrorBox, Field } from '../../ui/index.ts';
import { SelectField } from '../../ui/select-field.tsx';
import { TextareaField } from '../../ui/textarea-field.tsx';
import {
  BRANCH_STRATEGIES,
  buildCreateBody,
  CLI_TOOLS,
  type CreateErrors,
  type CreateForm,
  createdTarget,
  emptyCreateForm,
  MAX_BATCH_ITEMS,
  projectPathHint,
} from './model.ts';

export default function NewWorkflow() {
  const { route } = useLocation();
  const [form, setForm] = useState<CreateForm>(emptyCreateForm);
  const [errors, setErrors] = useState<CreateErrors>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // The caller's own project folders, as the API states them (the list's project_roots).
  const [roots, setRoots] = useState<string[] | null>(null);
  useEffect(() => {
    api
      .get<{ project_roots?: string[] }>('/api/autonomous/workflows', { query: { limit: 1 } })
      .then((a) => setRoots(a.project_roots ?? []))
      .catch(() => setRoots(null));
  }, []);
  const set =
    <K extends keyof CreateForm>(k: K) =>
    (v: CreateForm[K]) =>
      setForm((f) => ({ ...f, [k]: v }));

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const { body, errors: found } = buildCreateBody(form);
    setErrors(found);
    if (!body) return;
    setBusy(true);
    try {
      const answer = await api.post('/api/autonomous/workflows', body);
      const t = createdTarget(answer);
      if (t.batchId) route(`/autonomous?batch_id=${encodeURIComponent(t.batchId)}`);
      else if (t.workflowId) route(`/autonomous/${t.workflowId}`);
      else route('/autonomous');
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <section>
      <p>
        <a href="/autonomous">← All workflows</a>
      </p>
      <h1>New autonomous workflow</h1>
      <form class="aw-form" onSubmit={submit} noValidate aria-label="New workflow">
        <fieldset>
          <legend>What to create</legend>
          <label>
            <input
              type="radio"
              name="mode"
              value="single"
              checked={form.mode === 'single'}
              onChange={() => set('mode')('single')}
            />{' '}
            One requirement
          </label>
          <label>
            <input
              type="radio"
              name="mode"
              value="batch"
              checked={form.mode === 'batch'}
              onChange={() => set('mode')('batch')}
            />{' '}
            A batch of requirements
          </label>
        </fieldset>
        {form.mode === 'single' ? (
          <TextareaField
            key="single"
            label="Requirement"
            value={form.requirement}
            onValue={set('requirement')}
            rows={5}
            maxLength={20_000}
            error={errors.requirement}
            hint="Plain text (up to 20,000 characters), an issue URL (https://host/owner/repo/issues/12) or an issue number (#12)."
          />
        ) : (
          <TextareaField
            key="batch"
            label="Requirements, one per line"
            value={form.requirements}
            onValue={set('requirements')}
            rows={6}
            error={errors.requirements}
            hint={`Up to ${MAX_BATCH_ITEMS}. They run one at a time, each in its own worktree on one shared baseline.`}
          />
        )}
        <Field
          label="Project path"
          value={form.project_path}
          onValue={set('project_path')}
          error={errors.project_path}
          hint={projectPathHint(roots)}
          autoComplete="off"
        />
        <SelectField
          label="CLI tool"
          value={form.cli_tool}
          onValue={set('cli_tool')}
          options={[
            { value: '', label: 'Server default' },
            ...CLI_TOOLS.map((t) => ({ value: t, label: t })),
          ]}
        />
        <Field
          label="Model"
          value={form.model}
          onValue={set('model')}
          hint="Optional; the tool's default when empty."
          autoComplete="off"
        />
        {form.mode === 'single' ? (
          <SelectField
            label="Branch strategy"
            value={form.branch_strategy}
            onValue={set('branch_strategy')}
            options={BRANCH_STRATEGIES}
          />
        ) : (
          <p class="muted">Batch items always use independent worktrees.</p>
        )}
        <ErrorBox error={error} />
        <Button type="submit" variant="primary" busy={busy}>
          {form.mode === 'single' ? 'Create workflow' : 'Create batch'}
        </Button>
      </form>
    </section>
  );
}
