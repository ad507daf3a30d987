// The caller's personal upload tokens (issue 25 item 5; API: /api/upload-tokens): create one for a
// collector (name, optional expiry in days), shown once in a box to copy; the list shows name, prefix
// hint, created, last used, expiry and status, never the token; revoke asks first. Rows uploaded with a
// token count for its owner (docs/integrators/uploads.md "Uploading usage and messages").
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import {
  Button,
  type Column,
  ConfirmButton,
  ErrorBox,
  Field,
  formatTime,
  Loading,
  Table,
  useAction,
  useLoad,
} from '../../ui/index.ts';

const PATH = '/api/upload-tokens';

interface UploadToken {
  id: number;
  name: string;
  prefix: string;
  status: 'active' | 'expired' | 'revoked';
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

export default function UploadTokensPage() {
  const loaded = useLoad((signal) => api.get<{ upload_tokens: UploadToken[] }>(PATH, { signal }), []);
  const [name, setName] = useState('');
  const [days, setDays] = useState('');
  const [shown, setShown] = useState<{ name: string; token: string } | null>(null);
  const { act, error } = useAction(() => loaded.reload());

  const create = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const body = { name: name.trim(), ...(days ? { expires_in_days: Number(days) } : {}) };
      const made = await api.post<{ token: string; upload_token: UploadToken }>(PATH, body);
      setShown({ name: made.upload_token.name, token: made.token });
      setName('');
      setDays('');
    }, 'created');
  };

  const columns: Column<UploadToken>[] = [
    { key: 'name', header: 'Name' },
    { key: 'prefix', header: 'Starts with', render: (t) => <code>{t.prefix}…</code> },
    { key: 'created', header: 'Created', render: (t) => formatTime(t.created_at) },
    { key: 'used', header: 'Last used', render: (t) => formatTime(t.last_used_at) },
    { key: 'expires', header: 'Expires', render: (t) => (t.expires_at ? formatTime(t.expires_at) : 'never') },
    { key: 'status', header: 'Status' },
    {
      key: 'revoke',
      header: '',
      render: (t) =>
        t.status === 'revoked' ? null : (
          <ConfirmButton
            label={`Revoke ${t.name}`}
            question={`Revoke "${t.name}"? Collectors using it stop uploading.`}
            confirmText="Revoke"
            onConfirm={() => act(() => api.del(`${PATH}/${t.id}`), 'revoked')}
          >
            Revoke
          </ConfirmButton>
        ),
    },
  ];

  return (
    <section aria-labelledby="upload-tokens-title">
      <h1 id="upload-tokens-title">Upload tokens</h1>
      <p>
        A personal upload token lets a collector (<code>npm run collect -- --upload-token …</code>, or the
        header <code>X-Upload-Auth</code>) upload your usage and messages. Everything uploaded with it counts
        for you, whatever the rows say.
      </p>
      <form onSubmit={create} aria-label="New upload token">
        <Field label="Name" value={name} onValue={setName} required placeholder="work laptop" />
        <Field
          label="Expires after (days, optional)"
          type="number"
          min={1}
          max={3650}
          value={days}
          onValue={setDays}
        />
        <Button type="submit" disabled={!name.trim()}>
          Create token
        </Button>
      </form>
      {shown && (
        <div class="notice" role="status">
          <p>
            Token <strong>{shown.name}</strong>: copy it now, it is not shown again.
          </p>
          <code class="secret">{shown.token}</code>
          <Button variant="link" onClick={() => setShown(null)}>
            Done
          </Button>
        </div>
      )}
      {error != null && <ErrorBox error={error} />}
      {loaded.error != null && !loaded.data && (
        <ErrorBox error={loaded.error} title="Tokens could not be loaded" />
      )}
      {loaded.data ? (
        <Table
          caption="Your upload tokens"
          columns={columns}
          rows={loaded.data.upload_tokens}
          rowKey={(t) => t.id}
          empty="No upload tokens yet."
        />
      ) : (
        loaded.error == null && <Loading label="Loading upload tokens…" />
      )}
    </section>
  );
}
