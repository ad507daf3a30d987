// GET /api/sso/identities/<user_id> and DELETE /api/sso/identities/<user_id>/<provider_name>: the
// user itself or an administrator of the user's tenant (system administrators: anyone); other users
// and other tenants' admins get 403 (without learning whether the id exists); unknown users 404 for
// administrators. Unlinking the last identity of a user without a usable password is refused (409).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ssoIdentitiesRepository } from '../../../db/repositories/sso-identities.ts';
import { usersRepository } from '../../../db/repositories/users.ts';
import { hashPassword } from '../../../domain/passwords.ts';
import { unusablePasswordHash } from '../../../domain/sso/unusable-password.ts';
import { buildCast, type Cast, uniqueName } from '../../support/actors.ts';
import { startTestApp, type TestApp } from '../../support/harness.ts';
import { api, type Session } from '../../support/session.ts';

let app: TestApp;
let cast: Cast;
const session = (name: keyof Cast['actors']): Session => cast.actors[name].session!;
const idOf = (name: keyof Cast['actors']) => cast.actors[name].id!;

before(async () => {
  app = await startTestApp();
  cast = await buildCast(app);
  const links = ssoIdentitiesRepository(app.database);
  await links.link(idOf('user'), 'idp-a', 'user-subject-1');
  await links.link(idOf('user'), 'idp-b', 'user-subject-2');
  await links.link(idOf('manager'), 'idp-a', 'manager-subject');
});
after(() => app?.close());

const get = (auth: Session | undefined, userId: number | string) =>
  api(app.url, 'GET', `/api/sso/identities/${userId}`, { auth });

describe('GET /api/sso/identities/<user_id>', () => {
  test('self sees its identities', async () => {
    const r = await get(session('user'), idOf('user'));
    assert.equal(r.status, 200);
    assert.equal(r.body.user_id, idOf('user'));
    assert.deepEqual(
      r.body.identities.map((i: { provider_name: string; provider_user_id: string }) => [
        i.provider_name,
        i.provider_user_id,
      ]),
      [
        ['idp-a', 'user-subject-1'],
        ['idp-b', 'user-subject-2'],
      ],
    );
  });

  test('another user is refused with 403, also for an unknown id (existence not revealed)', async () => {
    assert.equal((await get(session('manager'), idOf('user'))).status, 403);
    assert.equal((await get(session('readonly'), idOf('user'))).status, 403);
    assert.equal((await get(session('user'), 987654)).status, 403);
  });

  test('unauthenticated 401; malformed id 400', async () => {
    assert.equal((await get(undefined, idOf('user'))).status, 401);
    assert.equal((await get(session('user'), 'abc')).status, 400);
  });

  test('administrators: same-tenant admin and system admins see it; another tenant’s admin gets 403; unknown 404', async () => {
    assert.equal((await get(session('tenant_admin'), idOf('user'))).status, 200);
    assert.equal((await get(cast.admin, idOf('user'))).status, 200);
    assert.equal((await get(session('legacy_admin'), idOf('user'))).status, 200);
    assert.equal((await get(session('other_tenant_admin'), idOf('user'))).status, 403);
    assert.equal((await get(cast.admin, 987654)).status, 404);
    assert.equal((await get(session('tenant_admin'), 987654)).status, 404);
  });
});

describe('DELETE /api/sso/identities/<user_id>/<provider_name>', () => {
  test('others are refused and nothing is removed', async () => {
    for (const who of ['manager', 'readonly', 'other_tenant_admin'] as const) {
      const r = await api(app.url, 'DELETE', `/api/sso/identities/${idOf('user')}/idp-a`, {
        auth: session(who),
      });
      assert.equal(r.status, 403, who);
    }
    assert.equal((await get(session('user'), idOf('user'))).body.identities.length, 2);
  });

  test('self unlinks one (a user with a password may unlink all); unknown provider 404', async () => {
    const r = await api(app.url, 'DELETE', `/api/sso/identities/${idOf('user')}/idp-b`, {
      auth: session('user'),
    });
    assert.equal(r.status, 200);
    const left = await get(session('user'), idOf('user'));
    assert.deepEqual(
      left.body.identities.map((i: { provider_name: string }) => i.provider_name),
      ['idp-a'],
    );
    const again = await api(app.url, 'DELETE', `/api/sso/identities/${idOf('user')}/idp-b`, {
      auth: session('user'),
    });
    assert.equal(again.status, 404);
    const last = await api(app.url, 'DELETE', `/api/sso/identities/${idOf('user')}/idp-a`, {
      auth: session('user'),
    });
    assert.equal(last.status, 200, 'the user has a password, so the last identity may go');
  });

  test('a same-tenant admin unlinks; the last identity of an SSO-only user is refused with 409', async () => {
    const r = await api(app.url, 'DELETE', `/api/sso/identities/${idOf('manager')}/idp-a`, {
      auth: session('tenant_admin'),
    });
    assert.equal(r.status, 200);

    const ssoOnly = await usersRepository(app.database).create({
      username: uniqueName('sso-only'),
      passwordHash: unusablePasswordHash(await hashPassword(randomBytes(16).toString('hex'))),
      role: 'user',
      tenantId: cast.tenantA,
    });
    const links = ssoIdentitiesRepository(app.database);
    await links.link(ssoOnly.id, 'idp-a', `${ssoOnly.username}-a`);
    await links.link(ssoOnly.id, 'idp-b', `${ssoOnly.username}-b`);
    const first = await api(app.url, 'DELETE', `/api/sso/identities/${ssoOnly.id}/idp-a`, {
      auth: cast.admin,
    });
    assert.equal(first.status, 200, 'not the last one');
    const lastOne = await api(app.url, 'DELETE', `/api/sso/identities/${ssoOnly.id}/idp-b`, {
      auth: cast.admin,
    });
    assert.equal(lastOne.status, 409);
    assert.match(lastOne.body.error, /set a password/);
    assert.equal((await links.listForUser(ssoOnly.id)).length, 1);
  });

  test('link is idempotent and never moves an identity to another user', async () => {
    const links = ssoIdentitiesRepository(app.database);
    assert.equal(await links.link(idOf('readonly'), 'idp-c', 'ro-subject'), true);
    assert.equal(await links.link(idOf('readonly'), 'idp-c', 'ro-subject'), true);
    assert.equal(await links.link(idOf('manager'), 'idp-c', 'ro-subject'), false);
    assert.equal(await links.findUserId('idp-c', 'ro-subject'), idOf('readonly'));
    assert.equal((await links.listForUser(idOf('readonly'))).length, 1);
  });
});
