// The org-sync reconciliation rules (domain/orgsync/reconcile.ts), table by table: teams, users,
// memberships, departed members, usernames.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PlatformUser } from '../../domain/orgsync/platform.ts';
import {
  departedMemberships,
  type LocalUserRef,
  normalEmail,
  reconcileMemberships,
  reconcileTeams,
  reconcileUsers,
  type UserPlanInput,
  uniqueUsername,
  usernameBase,
} from '../../domain/orgsync/reconcile.ts';

test('teams: created when missing, renamed or re-parented when changed, removed departments kept', () => {
  const plan = reconcileTeams(
    [
      { id: '10', name: 'Engineering', parentId: null },
      { id: '11', name: 'Platform Team', parentId: '10' },
      { id: '12', name: 'Sales', parentId: null },
      { id: '13', name: 'Ops', parentId: '10' },
      { id: '13', name: 'Ops (duplicate page)', parentId: '10' },
    ],
    [
      { id: 1, externalId: '10', name: 'Engineering', parentExternalId: null },
      { id: 2, externalId: '11', name: 'Platform', parentExternalId: '10' },
      { id: 3, externalId: '12', name: 'Sales', parentExternalId: '10' },
      { id: 4, externalId: '99', name: 'Gone', parentExternalId: null },
    ],
  );
  assert.deepEqual(plan.create, [{ externalId: '13', name: 'Ops', parentExternalId: '10' }]);
  assert.deepEqual(plan.update, [
    { teamId: 2, name: 'Platform Team', parentExternalId: '10' },
    { teamId: 3, name: 'Sales', parentExternalId: null },
  ]);
  assert.equal(plan.unchanged, 1);
  assert.equal(plan.kept, 1);
});

test('teams: names are trimmed and cut to 200 characters; an empty name becomes the id', () => {
  const plan = reconcileTeams(
    [
      { id: '1', name: `  ${'x'.repeat(250)}  `, parentId: null },
      { id: '2', name: '   ', parentId: null },
    ],
    [],
  );
  assert.equal(plan.create[0]?.name.length, 200);
  assert.equal(plan.create[1]?.name, '2');
});

const ref = (id: number, over: Partial<LocalUserRef> = {}): LocalUserRef => ({
  id,
  username: `u${id}`,
  email: null,
  tenantId: 5,
  systemAdmin: false,
  deleted: false,
  ...over,
});
const pu = (id: string, email: string | null, name = id): PlatformUser => ({
  id,
  name,
  email,
  mobile: null,
  departmentIds: [],
});
const input = (over: Partial<UserPlanInput>): UserPlanInput => ({
  tenantId: 5,
  users: [],
  linked: new Map(),
  byEmail: new Map(),
  usersLinkedOnPlatform: new Set(),
  takenUsernames: new Set(),
  seatsLeft: Number.POSITIVE_INFINITY,
  ...over,
});

test('users: an existing link wins; links to another tenant or a deleted user are skipped', () => {
  const out = reconcileUsers(
    input({
      users: [pu('a', 'a@x.test'), pu('b', null), pu('c', null)],
      linked: new Map([
        ['a', ref(7)],
        ['b', ref(8, { tenantId: 6 })],
        ['c', ref(9, { deleted: true })],
      ]),
      byEmail: new Map([['a@x.test', [ref(1, { email: 'a@x.test' })]]]),
    }),
  );
  assert.deepEqual(out, [
    { kind: 'existing', platformUserId: 'a', userId: 7 },
    { kind: 'skip', platformUserId: 'b', reason: 'linked user belongs to another tenant' },
    { kind: 'skip', platformUserId: 'c', reason: 'linked user was deleted' },
  ]);
});

test('users: same email links a live user of the tenant, never a system admin, another tenant or an already linked user', () => {
  const out = reconcileUsers(
    input({
      users: [
        pu('a', 'Alice@X.test'),
        pu('b', 'root@x.test'),
        pu('c', 'carol@x.test'),
        pu('d', 'dave@x.test'),
        pu('e', 'alice@x.test'),
      ],
      byEmail: new Map([
        ['alice@x.test', [ref(12, { email: 'alice@x.test' }), ref(11, { email: 'ALICE@x.test' })]],
        ['root@x.test', [ref(1, { systemAdmin: true, tenantId: 5 })]],
        ['carol@x.test', [ref(20, { tenantId: 6 })]],
        ['dave@x.test', [ref(30)]],
      ]),
      usersLinkedOnPlatform: new Set([30]),
    }),
  );
  assert.deepEqual(
    out.map((d) => [
      d.platformUserId,
      d.kind,
      'userId' in d ? d.userId : 'username' in d ? d.username : null,
    ]),
    [
      ['a', 'link', 11],
      ['b', 'provision', 'root'],
      ['c', 'provision', 'carol'],
      ['d', 'provision', 'dave'],
      // the second platform user with Alice's email: 11 is taken by `a` now, 12 is free
      ['e', 'link', 12],
    ],
  );
});

test('users: provisioned usernames are unique (existing names, soft-deleted ones, and within the chunk)', () => {
  const out = reconcileUsers(
    input({
      users: [
        pu('p1', 'bob@x.test'),
        pu('p2', 'bob@y.test'),
        pu('ID 9!', null),
        pu('张三', 'weird'),
        pu('p5', '张三@x.test'),
      ],
      takenUsernames: new Set(['bob', 'bob-2']),
    }),
  );
  assert.deepEqual(
    out.map((d) => (d.kind === 'provision' ? [d.username, d.email] : d.kind)),
    [
      ['bob-3', 'bob@x.test'],
      ['bob-4', 'bob@y.test'],
      ['id9', null],
      ['user', null],
      ['p5', '张三@x.test'],
    ],
  );
});

test('users: provisioning stops at the tenant user limit; links still happen', () => {
  const out = reconcileUsers(
    input({
      users: [pu('a', null), pu('b', null), pu('c', 'c@x.test')],
      byEmail: new Map([['c@x.test', [ref(3)]]]),
      seatsLeft: 1,
    }),
  );
  assert.deepEqual(
    out.map((d) => d.kind),
    ['provision', 'skip', 'link'],
  );
  assert.equal((out[1] as { reason: string }).reason, 'tenant user limit reached');
});

test('usernames: base from the email local part, else the platform id, else `user`; candidates base, base-2, ...', () => {
  assert.equal(usernameBase({ email: 'Jane.Doe+tag@corp.test', id: 'x' }), 'jane.doetag');
  assert.equal(usernameBase({ email: null, id: 'U-42' }), 'u-42');
  assert.equal(usernameBase({ email: 'not-an-email', id: '...' }), 'user');
  assert.equal(usernameBase({ email: `${'a'.repeat(64)}@x.test`, id: 'x' }).length, 60);
  assert.equal(uniqueUsername('x', new Set()), 'x');
  assert.equal(uniqueUsername('x', new Set(['x', 'x-2', 'x-4'])), 'x-3');
  assert.equal(normalEmail(' A@B.test '), 'a@b.test');
  assert.equal(normalEmail('a@b@c'), null);
});

test('memberships: add missing, remove only rows the platform added, local rows kept and counted as present', () => {
  const plan = reconcileMemberships(
    'chatplat_a',
    new Map([
      [1, new Set([10, 11])],
      [2, new Set([12])],
      [3, new Set<number>()],
    ]),
    [
      { teamId: 10, userId: 1, managedBy: 'chatplat_a' },
      { teamId: 12, userId: 1, managedBy: 'chatplat_a' },
      { teamId: 13, userId: 1, managedBy: null },
      { teamId: 12, userId: 2, managedBy: null },
      { teamId: 10, userId: 3, managedBy: 'chatplat_a' },
      { teamId: 11, userId: 3, managedBy: 'chatplat_b' },
    ],
  );
  assert.deepEqual(plan.add, [{ teamId: 11, userId: 1 }]);
  assert.deepEqual(plan.remove, [
    { teamId: 12, userId: 1 },
    { teamId: 10, userId: 3 },
  ]);
});

test('departed members: the platform rows of users gone from the snapshot are removed, local rows stay', () => {
  const removed = departedMemberships(
    'chatplat_b',
    [
      { teamId: 1, userId: 5, managedBy: 'chatplat_b' },
      { teamId: 1, userId: 6, managedBy: 'chatplat_b' },
      { teamId: 2, userId: 6, managedBy: null },
    ],
    new Set([5]),
  );
  assert.deepEqual(removed, [{ teamId: 1, userId: 6 }]);
});
