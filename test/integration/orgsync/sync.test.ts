// Org sync end to end (issue 12 item 4): the real API starts orgSyncWorkflow on the real Temporal dev
// server, the worker's activities page through local fakes of both chat platforms (real HTTP), and
// the result is read from the real database. Proves: a run twice is idempotent (same teams, users,
// identities, memberships); an email match links an existing local user; usernames are made unique;
// a removed department keeps its team; a moved user's platform memberships follow, local teams and
// local memberships are untouched, a user gone from the platform keeps their account; a 429 is retried
// and the run succeeds; both platforms produce the same teams and users from the same org; the
// display-name cache is written (0600) and names imported chat-platform senders; the app secret is in
// no log line, answer, run row or workflow history.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { hashPassword } from '../../../domain/passwords.ts';
import { displayNamesFile } from '../../../services/orgsync/display-names.ts';
import { startChatplatAFake } from '../../fixtures/chatplat-a-fake.ts';
import { startChatplatBFake } from '../../fixtures/chatplat-b-fake.ts';
import type { FakeControls } from '../../fixtures/chatplat-org.ts';
import { createTenant } from '../../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../../support/harness.ts';
import { api, login, type Session } from '../../support/session.ts';
import { baseOrg, orgState, runSync } from './org-state.ts';

const SECRET_A = `secret-a-${randomUUID()}`;
const SECRET_B = `secret-b-${randomUUID()}`;

let app: TestApp;
let fakeA: FakeControls;
let fakeB: FakeControls;
let admin: Session;
let tenantA: number;
let tenantB: number;
const answers: unknown[] = [];
/** Platform A's state of tenant A after its first sync (compared with platform B's). */
let firstStateA: Awaited<ReturnType<typeof orgState>>;
const runIds: string[] = [];

const q = (text: string, params: unknown[] = []) =>
  app.database.sql.query<Record<string, unknown>>(text, params);

before(async () => {
  fakeA = await startChatplatAFake({ org: baseOrg(), appKey: 'app-key-a', appSecret: SECRET_A });
  fakeB = await startChatplatBFake({ org: baseOrg(), appKey: 'app-key-b', appSecret: SECRET_B });
  app = await startTestApp({
    worker: true,
    env: {
      SVC_CHATPLAT_A__APP_KEY: 'app-key-a',
      SVC_CHATPLAT_A__APP_SECRET: SECRET_A,
      SVC_CHATPLAT_A__API_BASE_URL: fakeA.url,
      SVC_CHATPLAT_B__APP_KEY: 'app-key-b',
      SVC_CHATPLAT_B__APP_SECRET: SECRET_B,
      SVC_CHATPLAT_B__API_BASE_URL: fakeB.url,
    },
  });
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  tenantA = await createTenant(app, admin);
  tenantB = await createTenant(app, admin);
});
after(async () => {
  await app?.close();
  await fakeA?.close();
  await fakeB?.close();
});

async function sync(platform: 'chatplat_a' | 'chatplat_b', tenantId: number) {
  const r = await runSync(app, admin, platform, tenantId);
  answers.push(...r.bodies);
  runIds.push(r.body.run_id);
  assert.equal(r.body.status, 'succeeded', JSON.stringify(r.body));
  assert.equal(r.body.error, null);
  return r.body.counts as Record<string, number>;
}

test('chatplat_a: the first sync mirrors the org; a second changes nothing', async () => {
  // A local user of the tenant with the same email (case aside) is linked, not duplicated; a user
  // named `cai` elsewhere makes the provisioned one `cai-2`; a local team is never touched.
  const hash = await hashPassword('local-password-1');
  await q('INSERT INTO users (username, password_hash, email, role, tenant_id) VALUES (?, ?, ?, ?, ?)', [
    'ann-local',
    hash,
    'ANN@corp.test',
    'user',
    tenantA,
  ]);
  await q('INSERT INTO users (username, password_hash, email, role, tenant_id) VALUES (?, ?, ?, ?, ?)', [
    'cai',
    hash,
    'someone-else@corp.test',
    'user',
    tenantB,
  ]);
  const annLocal = (await q('SELECT id FROM users WHERE username = ?', ['ann-local']))[0]!.id;
  await q('INSERT INTO teams (tenant_id, name) VALUES (?, ?)', [tenantA, 'Local Team']);
  const localTeam = (
    await q('SELECT id FROM teams WHERE tenant_id = ? AND managed_by IS NULL', [tenantA])
  )[0]!.id;
  await q('INSERT INTO team_members (team_id, user_id) VALUES (?, ?)', [localTeam, annLocal]);

  const first = await sync('chatplat_a', tenantA);
  assert.equal(first.departments, 4);
  assert.equal(first.users, 6);
  assert.equal(first.teams_created, 4);
  assert.equal(first.users_provisioned, 5);
  assert.equal(first.users_linked, 1);
  assert.equal(first.memberships_added, 6);
  assert.equal(first.memberships_removed, 0);

  const state = await orgState(app, tenantA, 'chatplat_a');
  assert.deepEqual(state.teams, [
    ['100', 'Engineering', null, true],
    ['101', 'Backend', '100', true],
    ['102', 'Frontend', '100', true],
    ['200', 'Sales', null, true],
  ]);
  assert.deepEqual(
    state.users.map((u) => [u.pid, u.username, u.email, u.role, u.active]),
    [
      ['u1', 'ann-local', 'ann@corp.test', 'user', true],
      ['u2', 'u2', null, 'user', true],
      ['u3', 'cai-2', 'cai@corp.test', 'user', true],
      ['u4', 'dee', 'dee@corp.test', 'user', true],
      ['u5', 'eve', 'eve@corp.test', 'user', true],
      ['u6', 'root.person', 'root.person@corp.test', 'user', true],
    ],
  );
  assert.deepEqual(state.memberships, [
    '100:u1:chatplat_a',
    '101:u2:chatplat_a',
    '101:u3:chatplat_a',
    '102:u5:chatplat_a',
    '200:u3:chatplat_a',
    '200:u4:chatplat_a',
  ]);
  firstStateA = state;
  // Provisioned users cannot log in with any password (the platform gives no login).
  const pw = await api(app.url, 'POST', '/api/auth/login', { body: { username: 'dee', password: '' } });
  assert.notEqual(pw.status, 200);
  const tenant = (await q('SELECT user_count FROM tenants WHERE id = ?', [tenantA]))[0]!;
  assert.equal(Number(tenant.user_count), 6);

  const second = await sync('chatplat_a', tenantA);
  assert.deepEqual(
    [second.teams_created, second.teams_updated, second.users_provisioned, second.users_linked],
    [0, 0, 0, 0],
  );
  assert.deepEqual([second.memberships_added, second.memberships_removed], [0, 0]);
  assert.deepEqual(await orgState(app, tenantA, 'chatplat_a'), state);
  assert.equal(
    Number(
      (await q('SELECT COUNT(*) AS n FROM sso_identities WHERE provider_name = ?', ['chatplat_a']))[0]!.n,
    ),
    6,
  );
  // the local team and its member are as they were; the staged snapshot is gone
  assert.deepEqual(
    (await q('SELECT user_id, managed_by FROM team_members WHERE team_id = ?', [localTeam])).map((r) => [
      Number(r.user_id),
      r.managed_by,
    ]),
    [[Number(annLocal), null]],
  );
  assert.equal(Number((await q('SELECT COUNT(*) AS n FROM org_sync_items'))[0]!.n), 0);
});

test('chatplat_a: a removed department keeps its team; moved users follow; local rows and vanished users stay', async () => {
  // A membership added locally in a platform team is never removed by a sync.
  const ben = (
    await q(
      "SELECT user_id FROM sso_identities WHERE provider_name = 'chatplat_a' AND provider_user_id = 'u2'",
    )
  )[0]!.user_id;
  const sales = (
    await q(
      "SELECT id FROM teams WHERE tenant_id = ? AND managed_by = 'chatplat_a' AND external_id = '200'",
      [tenantA],
    )
  )[0]!.id;
  await q('INSERT INTO team_members (team_id, user_id) VALUES (?, ?)', [sales, ben]);

  const org = fakeA.org;
  org.departments = org.departments.filter((d) => d.id !== '200');
  const user = (id: string) => org.users.find((u) => u.id === id)!;
  user('u1').departmentIds = ['102'];
  user('u3').departmentIds = ['101'];
  user('u4').departmentIds = ['101'];
  org.users = org.users.filter((u) => u.id !== 'u5');
  org.departments.find((d) => d.id === '102')!.name = 'Web Frontend';

  const counts = await sync('chatplat_a', tenantA);
  assert.equal(counts.departments, 3);
  assert.equal(counts.teams_kept, 1);
  assert.equal(counts.teams_updated, 1);
  assert.equal(counts.memberships_added, 2);
  assert.equal(counts.memberships_removed, 4);

  const state = await orgState(app, tenantA, 'chatplat_a');
  assert.deepEqual(state.teams, [
    ['100', 'Engineering', null, true],
    ['101', 'Backend', '100', true],
    ['102', 'Web Frontend', '100', true],
    ['200', 'Sales', null, true],
  ]);
  assert.deepEqual(state.memberships, [
    '101:u2:chatplat_a',
    '101:u3:chatplat_a',
    '101:u4:chatplat_a',
    '102:u1:chatplat_a',
    '200:u2:local',
  ]);
  // u5 left the platform: still a live, active user (never disabled or deleted), without platform teams.
  assert.deepEqual(
    state.users.find((u) => u.pid === 'u5'),
    { pid: 'u5', username: 'eve', email: 'eve@corp.test', role: 'user', active: true },
  );
  assert.equal(
    Number(
      (await q('SELECT COUNT(*) AS n FROM teams WHERE tenant_id = ? AND managed_by IS NULL', [tenantA]))[0]!
        .n,
    ),
    1,
  );
});

test('chatplat_b produces the same teams and users from the same org, also after a 429', async () => {
  const first = await sync('chatplat_b', tenantB);
  assert.equal(first.teams_created, 4);
  assert.equal(first.users_provisioned, 6);
  fakeB.rateLimitOnce();
  const again = await sync('chatplat_b', tenantB);
  assert.equal(fakeB.rateLimited, 1, 'the platform answered 429 once');
  assert.deepEqual([again.teams_created, again.users_provisioned, again.memberships_added], [0, 0, 0]);

  const b = await orgState(app, tenantB, 'chatplat_b');
  const a = firstStateA;
  assert.deepEqual(b.teams, a.teams);
  assert.deepEqual(
    b.memberships.map((m) => m.replace('chatplat_b', 'P')),
    a.memberships.map((m) => m.replace('chatplat_a', 'P')),
  );
  const shape = (s: typeof a) => s.users.map((u) => [u.pid, u.email, u.role, u.active]);
  assert.deepEqual(shape(b), shape(a));
  // ann was linked by email on A; on B nobody had her email, so she was provisioned as `ann`
  assert.equal(b.users.find((u) => u.pid === 'u1')?.username, 'ann');
  assert.equal(b.users.length, 6);
});

test('a platform identity never spans tenants: the same org synced into another tenant links nobody', async () => {
  fakeA.org = baseOrg();
  const tenantC = await createTenant(app, admin);
  const counts = await sync('chatplat_a', tenantC);
  assert.equal(counts.users_skipped, 6);
  assert.equal(counts.users_provisioned + counts.users_linked, 0);
  assert.equal(counts.teams_created, 4);
  assert.equal((await orgState(app, tenantC, 'chatplat_a')).memberships.length, 0);
  assert.equal(Number((await q('SELECT COUNT(*) AS n FROM users WHERE tenant_id = ?', [tenantC]))[0]!.n), 0);
});

test('display names: the cache file is written 0600 and names chat-platform senders of uploads', async () => {
  const file = displayNamesFile(app.settings.dataDir, 'chatplat_a');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const up = await api(app.url, 'POST', '/api/upload/messages', {
    headers: { 'x-upload-auth': 'test-upload-key' },
    body: {
      date: '2026-03-01',
      tool_name: 'orgsync-names',
      messages: [
        { message_id: 'n1', role: 'user', content: 'hi', message_source: 'chatplat_a', sender_id: 'u1' },
        { message_id: 'n2', role: 'user', content: 'hi', message_source: 'chatplat_b', sender_id: 'u4' },
        {
          message_id: 'n3',
          role: 'user',
          content: 'hi',
          message_source: 'chatplat_a',
          sender_id: 'u1',
          sender_name: 'Given',
        },
        { message_id: 'n4', role: 'user', content: 'hi', message_source: 'other', sender_id: 'u1' },
        { message_id: 'n5', role: 'user', content: 'hi', message_source: 'chatplat_a', sender_id: 'nobody' },
      ],
    },
  });
  assert.ok(up.status < 300, JSON.stringify(up.body));
  const rows = await q(
    "SELECT message_id, sender_name FROM daily_messages WHERE tool_name = 'orgsync-names' ORDER BY message_id",
  );
  assert.deepEqual(
    rows.map((r) => [r.message_id, r.sender_name]),
    [
      ['n1', 'Ann'],
      ['n2', 'Dee'],
      ['n3', 'Given'],
      ['n4', null],
      ['n5', null],
    ],
  );
});

test('the app secrets appear in no log line, answer, run row or workflow history', async () => {
  const client = await app.deps.temporal.client();
  assert.ok(runIds.length >= 5);
  for (const id of runIds) {
    const history = JSON.stringify(await client.workflow.getHandle(id).fetchHistory());
    for (const s of [SECRET_A, SECRET_B]) assert.ok(!history.includes(s), `secret in the history of ${id}`);
    assert.ok(history.includes('orgSyncFetchUsers'));
  }
  const logs = app.logs.join('\n');
  const texts = [logs, JSON.stringify(answers), JSON.stringify(await q('SELECT * FROM org_sync_runs'))];
  for (const t of texts) for (const s of [SECRET_A, SECRET_B]) assert.ok(!t.includes(s));
  for (const f of [fakeA, fakeB])
    assert.ok(!f.calls.some((c) => c.includes(SECRET_A) || c.includes(SECRET_B)));
});
