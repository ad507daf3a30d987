// Forge selection per project (services/forge/forge-for-project.ts): the GitHub forge for a project
// whose origin is a repository on the configured GitHub web URL when its tenant has a token, the local
// forge for everything else; remote URL parsing refuses other hosts, credentials in URLs and odd names.
// Tokens are per tenant (issue 25 item 2): each tenant's forge calls GitHub with its own token, the
// global SVC_GITHUB_TOKEN serves only the tenant SVC_GITHUB_TOKEN_TENANT_ID names, and a GitHub project
// of a tenant without a token fails with a message naming the fix, before any call to GitHub.
// Also the settings (names, defaults) and the egress refusal of an API URL not allowed.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { loadSettings } from '../../../config/settings.ts';
import { type DatabaseHandle, openDatabase } from '../../../db/client.ts';
import { ForgePermissionError } from '../../../domain/forge/errors.ts';
import { upgrade } from '../../../migrations/runner.ts';
import { tenantAutonomousSettings } from '../../../services/autonomous/tenant-settings.ts';
import { forgeSelector } from '../../../services/forge/forge-for-project.ts';
import { GitHubForge } from '../../../services/forge/github/github-forge.ts';
import { parseGitHubRemote, parseRepoKey } from '../../../services/forge/github/remote-url.ts';
import { LocalForge } from '../../../services/forge/local-forge.ts';
import { gitIn, makeGitRepo } from '../../fixtures/git-repo.ts';
import { type GitHubFake, startGitHubFake } from '../../fixtures/github-fake/server.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

let fake: GitHubFake;
let testDb: TestDatabase;
let database: DatabaseHandle;
const dirs: string[] = [];
let tenantA: number;
let tenantB: number;
let tenantC: number;
before(async () => {
  fake = await startGitHubFake();
  fake.createRepo('acme', 'widgets', { 'README.md': 'hi\n' });
  testDb = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDb.databaseUrl, sqlitePath: testDb.sqlitePath });
  await upgrade(database, 'head');
  const tenant = async (slug: string) => {
    const [row] = await database.sql.query<{ id: number }>(
      'INSERT INTO tenants (name, slug) VALUES (?, ?) RETURNING id',
      [slug, slug],
    );
    return Number(row!.id);
  };
  [tenantA, tenantB, tenantC] = [await tenant('forge-a'), await tenant('forge-b'), await tenant('forge-c')];
});
after(async () => {
  await fake.close();
  await database.close();
  await testDb.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function settingsWith(env: Record<string, string>) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-forge-select-'));
  dirs.push(dataDir);
  return loadSettings({ SVC_DATA_DIR: dataDir, ...env });
}
function projectWithOrigin(origin: string | null) {
  const p = makeGitRepo({ 'a.txt': 'a\n' });
  dirs.push(path.dirname(p.path));
  if (origin) gitIn(p.path, 'remote', 'add', 'origin', origin);
  return p.path;
}

test('parseGitHubRemote: the configured host only, https(.git), no credentials, valid names', () => {
  const web = 'https://github.com';
  assert.deepEqual(parseGitHubRemote('https://github.com/acme/widgets.git', web), {
    owner: 'acme',
    repo: 'widgets',
  });
  assert.deepEqual(parseGitHubRemote('https://github.com/acme/widgets', web), {
    owner: 'acme',
    repo: 'widgets',
  });
  assert.deepEqual(parseGitHubRemote('https://GitHub.com/acme/my.repo_1/', web), {
    owner: 'acme',
    repo: 'my.repo_1',
  });
  for (const bad of [
    'git@github.com:acme/widgets.git',
    'ssh://git@github.com/acme/widgets.git',
    'http://github.com/acme/widgets.git',
    'https://gitlab.com/acme/widgets.git',
    'https://x-access-token:secret@github.com/acme/widgets.git',
    'https://github.com/acme/widgets/tree/main',
    'https://github.com/acme/../etc.git',
    'https://github.com/acme',
    'https://github.com/ac me/widgets.git',
    'https://github.com/acme/widgets.git?x=1',
    'not a url',
  ])
    assert.equal(parseGitHubRemote(bad, web), null, bad);
  // GitHub Enterprise under a path prefix
  assert.deepEqual(parseGitHubRemote('https://ghe.corp/git/acme/w.git', 'https://ghe.corp/git'), {
    owner: 'acme',
    repo: 'w',
  });
  assert.equal(parseRepoKey('acme/w/x'), null);
  assert.equal(parseRepoKey('-/.'), null);
});

test('settings: GitHub API and web URL defaults; no token by default', () => {
  const s = settingsWith({});
  assert.equal(s.SVC_GITHUB_API_URL, 'https://api.github.com');
  assert.equal(s.SVC_GITHUB_WEB_URL, 'https://github.com');
  assert.equal(s.SVC_GITHUB_TOKEN, undefined);
  assert.throws(() => settingsWith({ SVC_GITHUB_API_URL: 'ftp://x' }));
});

test('selection: GitHub origin + token -> GitHub forge; everything else -> local forge', async () => {
  const onGitHub = projectWithOrigin(`${fake.webUrl}/acme/widgets.git`);
  const elsewhere = projectWithOrigin('https://example.com/acme/widgets.git');
  const ssh = projectWithOrigin('git@127.0.0.1:acme/widgets.git');
  const none = projectWithOrigin(null);

  const noToken = forgeSelector(
    settingsWith({ SVC_GITHUB_WEB_URL: fake.webUrl, SVC_GITHUB_API_URL: fake.apiUrl }),
    database,
  );
  assert.ok((await noToken.forProject(onGitHub, tenantC)) instanceof LocalForge, 'no token: local');

  // the operator's single-tenant fallback: SVC_GITHUB_TOKEN for the tenant it names
  const s = settingsWith({
    SVC_GITHUB_WEB_URL: fake.webUrl,
    SVC_GITHUB_API_URL: fake.apiUrl,
    SVC_GITHUB_TOKEN: fake.token,
    SVC_GITHUB_TOKEN_TENANT_ID: String(tenantC),
    SVC_EGRESS__ALLOW_HOSTS: '127.0.0.1,localhost',
  });
  const sel = forgeSelector(s, database);
  const gh = await sel.forProject(onGitHub, tenantC);
  assert.ok(gh instanceof GitHubForge);
  for (const p of [elsewhere, ssh, none, null])
    assert.ok((await sel.forProject(p, tenantC)) instanceof LocalForge, String(p));
  // the selected GitHub forge works end to end against the fake: clone and baseline
  const repo = await gh.ensureRepository({ id: 7, path: onGitHub });
  assert.deepEqual(repo, { repoKey: 'acme/widgets', defaultBranch: 'main' });
  assert.equal(await gh.baseline(repo), fake.branchSha('acme/widgets', 'main'));
  // the forge instance does not show its token when inspected or serialised
  const { inspect } = await import('node:util');
  assert.ok(!inspect(gh, { depth: 4 }).includes(fake.token));
  assert.ok(!JSON.stringify(gh, (_k, v) => (typeof v === 'bigint' ? String(v) : v)).includes(fake.token));
});

test('egress: the API URL on loopback is refused unless egress.allow_hosts names it', async () => {
  const project = projectWithOrigin(`${fake.webUrl}/acme/widgets.git`);
  const s = settingsWith({
    SVC_GITHUB_WEB_URL: fake.webUrl,
    SVC_GITHUB_API_URL: fake.apiUrl,
    SVC_GITHUB_TOKEN: fake.token,
    SVC_GITHUB_TOKEN_TENANT_ID: String(tenantC),
  });
  const gh = await forgeSelector(s, database).forProject(project, tenantC);
  const before = fake.requests.length;
  const err = await gh.ensureRepository({ id: 8, path: project }).catch((e) => e);
  assert.ok(err instanceof ForgePermissionError, String(err));
  assert.match(err.message, /loopback/);
  assert.equal(fake.requests.length, before, 'nothing reached the fake');
});

test("tokens per tenant: each tenant's forge uses its own token; the global one serves only its tenant", async () => {
  const project = projectWithOrigin(`${fake.webUrl}/acme/widgets.git`);
  const env = {
    SVC_GITHUB_WEB_URL: fake.webUrl,
    SVC_GITHUB_API_URL: fake.apiUrl,
    SVC_EGRESS__ALLOW_HOSTS: '127.0.0.1,localhost',
  };
  const s = settingsWith(env);
  const tenants = tenantAutonomousSettings({ database, settings: s });
  // A holds the token the fake accepts, B another one
  await tenants.update(tenantA, { githubToken: fake.token }, 1, new Date());
  await tenants.update(tenantB, { githubToken: 'ghp_tenantBsOwnTokenNotTheFakes0000' }, 1, new Date());
  const stored = await database.sql.query<{ c: string }>(
    'SELECT github_token_encrypted AS c FROM tenant_autonomous_settings WHERE tenant_id = ?',
    [tenantA],
  );
  assert.ok(stored[0]?.c && !stored[0].c.includes(fake.token), 'ciphertext only');
  assert.deepEqual((await tenants.view(tenantA)).github_token, {
    configured: true,
    hint: fake.token.slice(-4),
  });

  const sel = forgeSelector(s, database);
  const ghA = await sel.forProject(project, tenantA);
  const ghB = await sel.forProject(project, tenantB);
  assert.ok(ghA instanceof GitHubForge && ghB instanceof GitHubForge);
  assert.notEqual(ghA, ghB);
  assert.deepEqual(await ghA.ensureRepository({ id: 21, path: project }), {
    repoKey: 'acme/widgets',
    defaultBranch: 'main',
  });
  // B's workflow calls GitHub with B's token (the fake refuses it), never A's
  const before = fake.requests.length;
  const refused = await ghB.ensureRepository({ id: 22, path: project }).catch((e) => e);
  assert.ok(refused instanceof ForgePermissionError, String(refused));
  assert.ok(fake.requests.slice(before).every((r) => r.status === 401));

  // C has no token and no GitHub configured at all: the local forge, as before
  assert.ok((await sel.forProject(project, tenantC)) instanceof LocalForge);
  // the global token is set for A only: C's GitHub project fails, naming the fix, nothing reaches GitHub
  const withGlobal = forgeSelector(
    settingsWith({ ...env, SVC_GITHUB_TOKEN: fake.token, SVC_GITHUB_TOKEN_TENANT_ID: String(tenantA) }),
    database,
  );
  const quiet = fake.requests.length;
  const err = await withGlobal.forProject(project, tenantC).catch((e) => e);
  assert.ok(err instanceof ForgePermissionError, String(err));
  assert.match(
    err.message,
    new RegExp(`tenant ${tenantC} has no GitHub token.*PUT /api/tenants/${tenantC}/autonomous`),
  );
  assert.equal(fake.requests.length, quiet);
  // a token removed is gone: B now falls under the same rule
  await tenants.update(tenantB, { githubToken: null }, 1, new Date());
  assert.deepEqual((await tenants.view(tenantB)).github_token, { configured: false, hint: null });
  await assert.rejects(withGlobal.forProject(project, tenantB), ForgePermissionError);
});
