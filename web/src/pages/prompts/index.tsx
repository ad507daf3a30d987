// Prompt templates (issue 14 item 2; spec document 2 "Workspace (prompts and sessions)"): the
// caller's own and the tenant's public templates (featured first), searched by text and narrowed by
// category (GET /api/prompts, /api/prompts/categories), 50 a page; a link to create one, and to open,
// edit or delete each (changing is for the author or an administrator: the API answers 403 otherwise,
// shown in words).
import { useState } from 'preact/hooks';
import { api } from '../../api/client.ts';
import { useAuth } from '../../auth/session.tsx';
import { Button, ErrorBox, Field, formatNumber, formatTime, Loading, Table } from '../../ui/index.ts';
import { Pager } from '../../ui/pager.tsx';
import { SelectField } from '../../ui/select-field.tsx';
import { useLoad } from '../../ui/use-load.ts';
import type { PromptTemplate } from './prompt-form.ts';
import './prompts.css';

const PAGE_SIZE = 50;
const ADMIN_ROLES = new Set(['platform_admin', 'tenant_admin', 'admin']);

export default function Prompts() {
  const { user } = useAuth();
  const [searchInput, setSearchInput] = useState('');
  const [search, setSearch] = useState('');
  const [category, setCategory] = useState('');
  const [offset, setOffset] = useState(0);
  const [actionError, setActionError] = useState<unknown>(null);
  const cats = useLoad(
    (signal) =>
      api.get<{ categories: { category: string; count: number }[] }>('/api/prompts/categories', { signal }),
    [],
  );
  const list = useLoad(
    (signal) =>
      api.get<{ templates: PromptTemplate[]; total: number }>('/api/prompts', {
        query: { search, category, limit: PAGE_SIZE, offset },
        signal,
      }),
    [search, category, offset],
  );
  const mayChange = (t: PromptTemplate) =>
    !!user && (t.author_id === user.id || user.is_admin || ADMIN_ROLES.has(user.role));

  const remove = async (t: PromptTemplate) => {
    if (!window.confirm(`Delete the template “${t.name}”?`)) return;
    setActionError(null);
    try {
      await api.del(`/api/prompts/${t.id}`);
      list.reload();
      cats.reload();
    } catch (err) {
      setActionError(err);
    }
  };

  const categoryOptions = [
    { value: '', label: 'All categories' },
    ...(cats.data?.categories ?? []).map((c) => ({
      value: c.category,
      label: `${c.category} (${formatNumber(c.count)})`,
    })),
  ];

  return (
    <section>
      <div class="page-head">
        <h1>Prompts</h1>
        <a class="btn btn-primary" href="/prompts/new">
          New template
        </a>
      </div>
      <form
        class="prompt-filters"
        aria-label="Find templates"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setSearch(searchInput.trim());
        }}
      >
        <Field label="Search templates" type="search" value={searchInput} onValue={setSearchInput} />
        <SelectField
          label="Category"
          value={category}
          options={categoryOptions}
          onValue={(v) => {
            setOffset(0);
            setCategory(v);
          }}
        />
        <Button type="submit">Search</Button>
      </form>
      <ErrorBox error={cats.error} />
      <ErrorBox error={actionError} />
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && (
        <>
          <Table
            caption={`${formatNumber(list.data.total)} ${list.data.total === 1 ? 'template' : 'templates'}`}
            rowKey={(t) => t.id}
            rows={list.data.templates}
            empty={search || category ? 'No template matches.' : 'No templates yet. Create the first one.'}
            columns={[
              {
                key: 'name',
                header: 'Name',
                render: (t) => (
                  <>
                    <a href={`/prompts/${t.id}`}>{t.name}</a>
                    {t.is_featured && <span class="tag tag-featured">featured</span>}
                    {t.description && <div class="muted small">{t.description}</div>}
                  </>
                ),
              },
              { key: 'category', header: 'Category' },
              { key: 'tags', header: 'Tags', render: (t) => t.tags.join(', ') || '—' },
              { key: 'is_public', header: 'Visibility', render: (t) => (t.is_public ? 'Tenant' : 'Only me') },
              { key: 'use_count', header: 'Uses', numeric: true, render: (t) => formatNumber(t.use_count) },
              { key: 'updated_at', header: 'Updated', render: (t) => formatTime(t.updated_at) },
              {
                key: 'actions',
                header: 'Actions',
                render: (t) =>
                  mayChange(t) ? (
                    <Button variant="link" onClick={() => remove(t)} aria-label={`Delete ${t.name}`}>
                      Delete
                    </Button>
                  ) : (
                    ''
                  ),
              },
            ]}
          />
          <Pager offset={offset} total={list.data.total} pageSize={PAGE_SIZE} onOffset={setOffset} />
        </>
      )}
    </section>
  );
}
