// Both org-directory adapters against the local fakes of their platforms (real HTTP): paging, the
// token cache (one token request, renewed when the platform calls it invalid), typed errors (auth
// final, 429 rate-limited with the platform's hint), the secret kept out of every message, and the
// activity's mapping of those errors to Temporal failures.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { toFailure } from '../../activities/orgsync/sync.ts';
import { type OrgDirectory, PlatformApiError } from '../../domain/orgsync/platform.ts';
import { chatplatADirectory } from '../../services/orgsync/chatplat-a.ts';
import { chatplatBDirectory } from '../../services/orgsync/chatplat-b.ts';
import { retryAfterMs, scrub, tokenCache } from '../../services/orgsync/platform-http.ts';
import { startChatplatAFake } from '../fixtures/chatplat-a-fake.ts';
import { startChatplatBFake } from '../fixtures/chatplat-b-fake.ts';
import { type FakeControls, type FakeOrg, ROOT } from '../fixtures/chatplat-org.ts';

const SECRET = 'unit-secret-Zq9xK2';
const org = (): FakeOrg => ({
  departments: [
    { id: '100', name: 'Engineering', parentId: ROOT, chatId: 'chat-eng' },
    { id: '101', name: 'Backend', parentId: '100' },
    { id: '200', name: 'Sales', parentId: ROOT },
  ],
  users: [
    { id: 'u1', name: 'Ann', email: 'ann@corp.test', mobile: '100', departmentIds: ['100'] },
    { id: 'u2', name: 'Ben', email: null, mobile: null, departmentIds: ['100', '101'] },
    { id: 'u3', name: 'Cai', email: 'cai@corp.test', mobile: null, departmentIds: ['100'] },
  ],
});

const fakes: Record<'a' | 'b', FakeControls> = {} as never;
before(async () => {
  fakes.a = await startChatplatAFake({ org: org(), appKey: 'key-a', appSecret: SECRET });
  fakes.b = await startChatplatBFake({ org: org(), appKey: 'key-b', appSecret: SECRET });
});
after(async () => {
  await fakes.a?.close();
  await fakes.b?.close();
});

const dir = (which: 'a' | 'b', secret = SECRET): OrgDirectory => {
  const creds = { appKey: fakes[which].appKey, appSecret: secret, baseUrl: fakes[which].url };
  return which === 'a' ? chatplatADirectory(creds) : chatplatBDirectory(creds);
};

async function allUsers(d: OrgDirectory, dept: string) {
  const out = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await d.listDepartmentUsers(dept, cursor);
    out.push(...page.items);
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== null);
  return { users: out, pages };
}

for (const which of ['a', 'b'] as const) {
  test(`platform ${which}: departments, paged users, one cached token`, async () => {
    tokenCache.clear();
    const f = fakes[which];
    f.tokenRequests = 0;
    const d = dir(which);
    const top = await d.listDepartments(d.rootDepartmentId, null);
    assert.deepEqual(
      top.items.map((x) => [x.id, x.name, x.parentId, x.chatId ?? null]),
      [
        ['100', 'Engineering', d.rootDepartmentId, 'chat-eng'],
        ['200', 'Sales', d.rootDepartmentId, null],
      ],
    );
    const sub = await d.listDepartments('100', null);
    assert.deepEqual(
      sub.items.map((x) => [x.id, x.parentId]),
      [['101', '100']],
    );
    const { users, pages } = await allUsers(d, '100');
    assert.equal(pages, 2);
    assert.deepEqual(
      users.map((u) => [u.id, u.name, u.email, u.departmentIds]),
      [
        ['u1', 'Ann', 'ann@corp.test', ['100']],
        ['u2', 'Ben', null, ['100', '101']],
        ['u3', 'Cai', 'cai@corp.test', ['100']],
      ],
    );
    assert.equal(f.tokenRequests, 1, 'the token is fetched once and cached');
    assert.ok(!f.calls.some((c) => c.includes(SECRET)), 'the secret never appears in a URL');
  });

  test(`platform ${which}: an invalidated token is renewed once, transparently`, async () => {
    const f = fakes[which];
    const d = dir(which);
    await d.listDepartments(d.rootDepartmentId, null);
    const before = f.tokenRequests;
    f.expireTokens();
    const again = await d.listDepartments(d.rootDepartmentId, null);
    assert.equal(again.items.length, 2);
    assert.equal(f.tokenRequests, before + 1);
  });

  test(`platform ${which}: a wrong secret is a final auth error that names neither secret`, async () => {
    tokenCache.clear();
    const wrong = 'wrong-secret-Hh7';
    await assert.rejects(dir(which, wrong).listDepartments(dir(which).rootDepartmentId, null), (err) => {
      assert.ok(err instanceof PlatformApiError);
      assert.equal(err.kind, 'auth');
      assert.equal(err.retryable, false);
      assert.ok(!err.message.includes(wrong) && !err.message.includes(SECRET), err.message);
      return true;
    });
  });

  test(`platform ${which}: 429 is a retryable rate limit with the platform's hint`, async () => {
    const d = dir(which);
    fakes[which].rateLimitOnce();
    let caught: unknown;
    try {
      await d.listDepartments(d.rootDepartmentId, null);
    } catch (err) {
      caught = err;
    }
    assert.ok(caught instanceof PlatformApiError, String(caught));
    assert.equal(caught.kind, 'rate_limited');
    assert.equal(caught.retryAfterMs, 1000);
    const failure = toFailure(caught);
    assert.ok(failure instanceof ApplicationFailure);
    assert.equal(failure.type, 'OrgSyncRateLimited');
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.nextRetryDelay, 1000);
    // the next call goes through
    assert.equal((await d.listDepartments(d.rootDepartmentId, null)).items.length, 2);
  });
}

test('failure mapping: auth and rejected are final, unavailable retryable', () => {
  const map = (kind: PlatformApiError['kind']) =>
    toFailure(new PlatformApiError('chatplat_a', kind, 'x')) as ApplicationFailure;
  assert.equal(map('auth').nonRetryable, true);
  assert.equal(map('auth').type, 'OrgSyncAuthFailed');
  assert.equal(map('rejected').nonRetryable, true);
  assert.equal(map('unavailable').nonRetryable, false);
});

test('scrub removes the secret and the key from platform text; retry hints in seconds or dates', () => {
  assert.equal(
    scrub('bad secret s3cr3t for k3y', { appSecret: 's3cr3t', appKey: 'k3y' }),
    'bad secret [redacted] for [app key]',
  );
  assert.equal(scrub(undefined, { appSecret: 'x', appKey: 'y' }), '');
  assert.equal(retryAfterMs('2'), 2000);
  assert.equal(retryAfterMs(new Date(61_000).toUTCString(), 1000), 60_000);
  assert.equal(retryAfterMs('soon'), null);
});
