// Personal gateway keys (issue 29 item 1; API: /api/gateway-keys): a key for the CLIs on the user's
// own laptop, used with the model proxy in place of a provider key. Create one (name, provider,
// optional expiry and lower limits); it is shown once with a copy button and a snippet per CLI; the
// list shows prefix, provider, limits, last use and expiry, never the key; revoke asks first. A tenant
// administrator also sees (and may revoke) the tenant's keys.
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { isAdministrator } from '../../auth/access.ts';
import { useAuth } from '../../auth/session.tsx';
import { CopyBox } from '../../ui/copy-box.tsx';
import {
  Button,
  type Column,
  ConfirmButton,
  ErrorBox,
  Field,
  formatTime,
  SelectField,
  Table,
  useAction,
  useLoad,
} from '../../ui/index.ts';
import { Loaded } from '../../ui/loaded.tsx';
import { cliSnippets, type Provider } from './snippets.ts';

const PATH = '/api/gateway-keys';
const PROVIDERS = [
  { value: 'anthropic', label: 'Anthropic (Claude Code)' },
  { value: 'openai', label: 'OpenAI (Codex, Qwen Code)' },
  { value: 'gemini', label: 'Gemini (Gemini CLI)' },
] as const;

interface GatewayKey {
  id: number;
  name: string;
  provider: Provider;
  key_prefix: string;
  username: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  daily_token_limit: number | null;
  monthly_token_limit: number | null;
  daily_request_limit: number | null;
}

const limitsOf = (k: GatewayKey) =>
  [
    k.daily_request_limit !== null && `${k.daily_request_limit} requests/day`,
    k.daily_token_limit !== null && `${k.daily_token_limit} tokens/day`,
    k.monthly_token_limit !== null && `${k.monthly_token_limit} tokens/month`,
  ]
    .filter(Boolean)
    .join(', ') || 'your quota';

const optional = (v: string) => (v.trim() ? Number(v) : undefined);

/** Revoking asks first: the CLIs using the key stop at once. */
function RevokeKey({ gatewayKey, onRevoke }: { gatewayKey: GatewayKey; onRevoke: () => void }) {
  const { name } = gatewayKey;
  return (
    <ConfirmButton
      label={`Revoke ${name}`}
      question={`Revoke "${name}"? CLIs using it stop at once.`}
      confirmText="Revoke"
      onConfirm={onRevoke}
    >
      Revoke
    </ConfirmButton>
  );
}

export default function GatewayKeysPage() {
  const { viewer } = useAuth();
  const admin = viewer !== undefined && isAdministrator(viewer);
  const [tenantScope, setTenantScope] = useState(false);
  const url = tenantScope ? `${PATH}?scope=tenant` : PATH;
  const loaded = useLoad((signal) => api.get<{ keys: GatewayKey[] }>(url, { signal }), [url]);
  const [form, setForm] = useState({
    name: '',
    provider: 'anthropic',
    expires: '',
    reqDay: '',
    tokDay: '',
    tokMonth: '',
  });
  const set = (k: keyof typeof form) => (v: string) => setForm({ ...form, [k]: v });
  const [shown, setShown] = useState<{ name: string; provider: Provider; key: string } | null>(null);
  const { act, error } = useAction(() => loaded.reload());

  const create = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const body = {
        name: form.name.trim(),
        provider: form.provider,
        ...(form.expires ? { expires_at: new Date(`${form.expires}T23:59:59`).toISOString() } : {}),
        daily_request_limit: optional(form.reqDay),
        daily_token_limit: optional(form.tokDay),
        monthly_token_limit: optional(form.tokMonth),
      };
      const made = await api.post<GatewayKey & { key: string }>(PATH, body);
      setShown({ name: made.name, provider: made.provider, key: made.key });
      setForm({ ...form, name: '', expires: '', reqDay: '', tokDay: '', tokMonth: '' });
    }, 'created');
  };

  const columns: Column<GatewayKey>[] = [
    { key: 'name', header: 'Name' },
    ...(tenantScope ? [{ key: 'username', header: 'Owner' } as Column<GatewayKey>] : []),
    { key: 'provider', header: 'Provider' },
    { key: 'prefix', header: 'Starts with', render: (k) => <code>{k.key_prefix}…</code> },
    { key: 'limits', header: 'Limits', render: limitsOf },
    { key: 'used', header: 'Last used', render: (k) => formatTime(k.last_used_at) },
    { key: 'expires', header: 'Expires', render: (k) => (k.expires_at ? formatTime(k.expires_at) : 'never') },
    {
      key: 'revoke',
      header: '',
      render: (k) =>
        k.revoked_at ? (
          'revoked'
        ) : (
          <RevokeKey gatewayKey={k} onRevoke={() => void act(() => api.del(`${PATH}/${k.id}`), 'revoked')} />
        ),
    },
  ];

  return (
    <section aria-labelledby="gateway-keys-title">
      <h1 id="gateway-keys-title">Gateway keys</h1>
      <p>
        A gateway key lets Claude Code, Codex, Gemini CLI or Qwen Code on your own laptop use the model proxy
        in place of a provider key: your quota and the content filter apply, and the usage shows as yours.
        Optional limits are lower limits inside your quota.
      </p>
      <form onSubmit={create} aria-label="New gateway key">
        <Field label="Name" value={form.name} onValue={set('name')} required placeholder="work laptop" />
        <SelectField label="Provider" value={form.provider} options={PROVIDERS} onValue={set('provider')} />
        <Field label="Expires on (optional)" type="date" value={form.expires} onValue={set('expires')} />
        <Field
          label="Requests per day (optional)"
          type="number"
          min={1}
          value={form.reqDay}
          onValue={set('reqDay')}
        />
        <Field
          label="Tokens per day (optional)"
          type="number"
          min={1}
          value={form.tokDay}
          onValue={set('tokDay')}
        />
        <Field
          label="Tokens per month (optional)"
          type="number"
          min={1}
          value={form.tokMonth}
          onValue={set('tokMonth')}
        />
        <Button type="submit" disabled={!form.name.trim()}>
          Create key
        </Button>
      </form>
      {shown && (
        <div class="notice secret-once" role="status">
          <p>
            Key <strong>{shown.name}</strong>: copy it now, it is not shown again.
          </p>
          <CopyBox label="Gateway key" text={shown.key} />
          {cliSnippets(window.location.origin, shown.provider, shown.key).map((s) => (
            <CopyBox key={s.cli} label={s.cli} text={s.text} />
          ))}
          <Button variant="link" onClick={() => setShown(null)}>
            Done
          </Button>
        </div>
      )}
      {error != null && <ErrorBox error={error} />}
      {admin && (
        <Button variant="link" onClick={() => setTenantScope(!tenantScope)}>
          {tenantScope ? 'Show my keys' : "Show my tenant's keys"}
        </Button>
      )}
      <Loaded of={loaded}>
        <Table
          caption={tenantScope ? "Your tenant's gateway keys" : 'Your gateway keys'}
          columns={columns}
          rows={loaded.data?.keys ?? []}
          rowKey={(k) => k.id}
          empty="No gateway keys yet."
        />
      </Loaded>
    </section>
  );
}
