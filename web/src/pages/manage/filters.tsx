// /manage/filters: content filter rules (GET/POST /api/filter-rules, PUT/DELETE …/<id>): keywords or
// RE2 patterns that warn, block or send content to review, global or per tenant. Enable/disable in
// place, delete confirmed; an invalid pattern comes back from the API as a 400 in words.
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { CheckField } from '../../ui/check-field.tsx';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { Button, ErrorBox, Field, formatNumber, Table } from '../../ui/index.ts';
import { Loaded } from '../../ui/loaded.tsx';
import { SelectField } from '../../ui/select-field.tsx';
import { useAction } from '../../ui/use-action.ts';
import { useSubmit } from '../../ui/use-submit.ts';
import { tenantIdOf } from './form-values.ts';
import { Done, ManagePage } from './layout.tsx';
import { tenantName, tenantOptions, useTenants } from './tenant-options.ts';
import type { FilterRule } from './types.ts';
import { useResource } from './use-resource.ts';

const opts = (xs: string[]) => xs.map((x) => ({ value: x, label: x }));

function AddRule({ onAdded }: { onAdded: (msg: string) => void }) {
  const tenants = useTenants();
  const [pattern, setPattern] = useState('');
  const [type, setType] = useState('keyword');
  const [severity, setSeverity] = useState('medium');
  const [action, setAction] = useState('warn');
  const [description, setDescription] = useState('');
  const [tenant, setTenant] = useState('');
  const [enabled, setEnabled] = useState(true);
  const { busy, error, submit } = useSubmit(async () => {
    await api.post('/api/filter-rules', {
      pattern,
      type,
      severity,
      action,
      description: description || null,
      is_enabled: enabled,
      tenant_id: tenantIdOf(tenant),
    });
    onAdded(`Rule "${pattern}" added`);
    setPattern('');
    setDescription('');
  });
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="add-rule-h">
      <h2 id="add-rule-h">Add a rule</h2>
      <ErrorBox error={error} />
      <div class="form-grid">
        <Field
          label="Pattern"
          value={pattern}
          onValue={setPattern}
          required
          hint="A keyword, or an RE2 regular expression"
        />
        <SelectField label="Type" value={type} onValue={setType} options={opts(['keyword', 'regex'])} />
        <SelectField
          label="Severity"
          value={severity}
          onValue={setSeverity}
          options={opts(['low', 'medium', 'high'])}
        />
        <SelectField
          label="Action"
          value={action}
          onValue={setAction}
          options={opts(['warn', 'block', 'review'])}
        />
        <SelectField
          label="Applies to"
          value={tenant}
          onValue={setTenant}
          options={tenantOptions(tenants.data, 'Every tenant (global)')}
        />
        <Field label="Description" value={description} onValue={setDescription} />
      </div>
      <CheckField label="Enabled" checked={enabled} onChecked={setEnabled} />
      <Button type="submit" variant="primary" busy={busy}>
        Add rule
      </Button>
    </form>
  );
}

export default function FiltersPage() {
  const tenants = useTenants();
  const rules = useResource((signal) =>
    api.get<{ rules: FilterRule[]; total: number }>('/api/filter-rules', { signal }),
  );
  const [done, setDone] = useState<string | null>(null);
  const { act, error } = useAction((msg) => {
    setDone(msg);
    void rules.reload();
  });
  return (
    <ManagePage title="Filter rules">
      <Done message={done} />
      <AddRule
        onAdded={(msg) => {
          setDone(msg);
          void rules.reload();
        }}
      />
      <ErrorBox error={error} />
      <Loaded of={rules}>
        <Table
          caption={`Rules (${formatNumber(rules.data?.total ?? 0)})`}
          rowKey={(r) => r.id}
          rows={rules.data?.rules ?? []}
          empty="No filter rule yet."
          columns={[
            { key: 'pattern', header: 'Pattern', render: (r) => <code class="cell-wrap">{r.pattern}</code> },
            { key: 'type', header: 'Type' },
            { key: 'severity', header: 'Severity' },
            { key: 'action', header: 'Action' },
            {
              key: 'tenant',
              header: 'Applies to',
              render: (r) => (r.tenant_id == null ? 'Global' : tenantName(tenants.data, r.tenant_id)),
            },
            {
              key: 'description',
              header: 'Description',
              render: (r) => <span class="cell-wrap">{r.description ?? ''}</span>,
            },
            {
              key: 'enabled',
              header: 'State',
              render: (r) => (
                <span class={`badge ${r.is_enabled ? 'badge-ok' : ''}`}>
                  {r.is_enabled ? 'enabled' : 'disabled'}
                </span>
              ),
            },
            {
              key: 'actions',
              header: 'Actions',
              render: (r) => (
                <div class="row-actions">
                  <Button
                    aria-label={`${r.is_enabled ? 'Disable' : 'Enable'} rule ${r.pattern}`}
                    onClick={() =>
                      act(
                        () => api.put(`/api/filter-rules/${r.id}`, { is_enabled: !r.is_enabled }),
                        `Rule "${r.pattern}" ${r.is_enabled ? 'disabled' : 'enabled'}`,
                      )
                    }
                  >
                    {r.is_enabled ? 'Disable' : 'Enable'}
                  </Button>
                  <ConfirmButton
                    label={`Delete rule ${r.pattern}`}
                    question="Delete this rule?"
                    onConfirm={() =>
                      act(() => api.del(`/api/filter-rules/${r.id}`), `Rule "${r.pattern}" deleted`)
                    }
                  >
                    Delete
                  </ConfirmButton>
                </div>
              ),
            },
          ]}
        />
      </Loaded>
    </ManagePage>
  );
}
