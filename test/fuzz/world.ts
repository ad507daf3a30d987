// The world one fuzzing role runs against: two tenants with one user per role the spec names
// (test/support/actors.ts: platform admin, legacy admin, tenant admin, manager, user, readonly, and a
// tenant admin of the second tenant), a registered agent machine with an assigned user, provider keys
// (both key APIs) in both tenants, a remote session with a proxy token, uploaded usage, alerts, a
// recorded session. Seeded over the real API where the API can do it, in the database only where the
// real product does it outside any route (proxy tokens are issued by the session workflow, alerts by
// producers) and for the users themselves: they are stored with a 4-round bcrypt hash of the password
// (one hash per process) so that a world costs a few milliseconds of bcrypt instead of seconds of
// 12-round hashing; every role still logs in over the real login route.
//
// It also returns what no answer may ever hold (`secrets`) and, per tenant, strings that only that
// tenant's answers may hold (`tenantMarkers`): hooks.py fails a response that carries either.
import { randomUUID } from 'node:crypto';
import { hash } from '@node-rs/bcrypt';
import { usersRepository } from '../../db/repositories/users.ts';
import { raiseAlert } from '../../services/alerts/raise.ts';
import { proxyTokenService } from '../../services/proxy-tokens.ts';
import {
  type Actor,
  type ActorName,
  type Cast,
  createTenant,
  PASSWORD,
  uniqueName,
} from '../support/actors.ts';
import { ADMIN, type TestApp } from '../support/harness.ts';
import { registerFakeMachine, registrationToken } from '../support/remote.ts';
import { api, login } from '../support/session.ts';

/** A caller the fuzz runs as: its headers, and the tenant whose data it may see (null: every tenant). */
export interface FuzzRole {
  name: string;
  headers: Record<string, string>;
  /** Credential scheme of the operations this role is fuzzed against (the document's `security`). */
  schemes: ('session' | 'agentToken' | 'proxyToken' | 'uploadKey' | 'anonymous')[];
  /** The tenant it belongs to; null for system-wide callers (no cross-tenant check). */
  tenantId: number | null;
  /** Its own credential: the one token it may see. */
  ownToken?: string;
}

export interface World {
  tenantA: number;
  tenantB: number;
  roles: FuzzRole[];
  /** Strings no response body may contain, whoever asks. */
  secrets: string[];
  /** Strings only a caller of that tenant (or a system-wide caller) may see, by tenant id. */
  tenantMarkers: Record<number, string[]>;
  /**
   * Real identifiers by path-parameter name, per tenant: the fuzz draws path parameters from them
   * (often, not always) so that cases reach handlers instead of stopping at a 404.
   */
  ids: Record<number, Record<string, (string | number)[]>>;
}

const PROVIDER_KEY = () => `sk-fuzz-provider-${randomUUID()}`;

async function ok(r: { status: number; body: any }, what: string, expected = [200, 201]) {
  if (!expected.includes(r.status)) throw new Error(`seed ${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

let cheapHash: Promise<string> | undefined;

/** The cast of test/support/actors.ts (same roles, same shape), with cheaply hashed passwords. */
export async function buildFuzzCast(app: TestApp): Promise<Cast> {
  cheapHash ??= hash(PASSWORD, { cost: 4 });
  const passwordHash = await cheapHash;
  const users = usersRepository(app.database);
  const insert = async (role: string, tenantId: number | null) => {
    const username = uniqueName(role);
    const now = new Date();
    await users.create({
      username,
      email: `${username}@example.test`,
      passwordHash,
      role,
      isAdmin: role === 'platform_admin' || role === 'admin',
      tenantId,
      createdAt: now,
      updatedAt: now,
    });
    return login(app.url, username, PASSWORD);
  };
  const admin = await insert('platform_admin', null);
  const [tenantA, tenantB] = await Promise.all([createTenant(app, admin), createTenant(app, admin)]);
  const specs: [ActorName, string, number | null][] = [
    ['legacy_admin', 'admin', null],
    ['tenant_admin', 'tenant_admin', tenantA],
    ['manager', 'manager', tenantA],
    ['user', 'user', tenantA],
    ['readonly', 'readonly', tenantA],
    ['other_tenant_admin', 'tenant_admin', tenantB],
  ];
  const sessions = await Promise.all(specs.map(([, role, t]) => insert(role, t)));
  const actors = {
    anonymous: { name: 'anonymous', role: null, tenant: null },
    platform_admin: {
      name: 'platform_admin',
      role: 'platform_admin',
      tenant: null,
      session: admin,
      id: admin.user.id,
    },
  } as Record<ActorName, Actor>;
  specs.forEach(([name, role, t], i) => {
    const session = sessions[i]!;
    actors[name] = {
      name,
      role,
      tenant: t === tenantA ? 'A' : t === tenantB ? 'B' : null,
      session,
      id: session.user.id,
    };
  });
  return { admin, tenantA: tenantA!, tenantB: tenantB!, actors };
}

/** Seeds one world; `providerUrl` is the local mock provider the proxy forwards to. */
export async function seedWorld(app: TestApp, providerUrl: string): Promise<World> {
  const cast = await buildFuzzCast(app);
  const { tenantA, tenantB } = cast;
  const admin = cast.admin;
  const secrets: string[] = [
    ADMIN.password,
    PASSWORD,
    app.settings.SVC_ENCRYPTION_KEY ?? '',
    app.settings.SECRET_KEY ?? '',
    app.settings.SVC_UPLOAD_AUTH_KEY ?? '',
  ].filter((s) => s.length >= 8);
  const markers: Record<number, string[]> = { [tenantA]: [], [tenantB]: [] };
  const ids: Record<number, Record<string, (string | number)[]>> = { [tenantA]: {}, [tenantB]: {} };
  const addId = (tenant: number, param: string, ...values: (string | number)[]) => {
    const into = ids[tenant]!;
    into[param] = [...(into[param] ?? []), ...values];
  };
  for (const t of [tenantA, tenantB]) addId(t, 'tenant_id', t);

  // Tenant names and slugs, usernames: visible to that tenant only.
  const tenants = await ok(await api(app.url, 'GET', '/api/tenants', { auth: admin }), 'tenants');
  for (const t of tenants.tenants as { id: number; name: string; slug: string }[])
    if (markers[t.id]) {
      markers[t.id]!.push(t.name, t.slug);
      addId(t.id, 'slug', t.slug);
    }
  for (const actor of Object.values(cast.actors)) {
    const tid = actor.tenant === 'A' ? tenantA : actor.tenant === 'B' ? tenantB : null;
    if (tid && actor.session) {
      markers[tid]!.push(actor.session.user.username);
      addId(tid, 'user_id', actor.session.user.id);
      addId(tid, 'uid', actor.session.user.id);
      addId(tid, 'user_name', actor.session.user.username);
    }
  }

  // Provider keys through both key APIs, in both tenants (the proxy forwards with tenant A's).
  for (const tenant of [tenantA, tenantB]) {
    const remoteKey = PROVIDER_KEY();
    const rk = await ok(
      await api(app.url, 'POST', '/api/remote/api-keys', {
        auth: admin,
        body: {
          provider: 'openai',
          key_name: `fuzz-remote-${tenant}`,
          api_key: remoteKey,
          base_url: `${providerUrl}/v1`,
          tenant_id: tenant,
        },
      }),
      'remote api key',
    );
    const tenantKey = PROVIDER_KEY();
    const tk = await ok(
      await api(app.url, 'POST', '/api/api-keys', {
        auth: admin,
        body: {
          tenant_id: tenant,
          provider: 'anthropic',
          key_name: `fuzz-tenant-key-${tenant}`,
          api_key: tenantKey,
        },
      }),
      'tenant api key',
    );
    secrets.push(remoteKey, tenantKey);
    if (rk.key?.id !== undefined) addId(tenant, 'id', rk.key.id);
    if (tk.key?.id !== undefined) addId(tenant, 'key_id', tk.key.id);
    markers[tenant]!.push(`fuzz-remote-${tenant}`, `fuzz-tenant-key-${tenant}`);
  }

  // A registered machine in each tenant, the tenant A user assigned to A's; an unused registration token.
  const machineA = await registerFakeMachine(app.url, admin, tenantA);
  const machineB = await registerFakeMachine(app.url, admin, tenantB);
  markers[tenantA]!.push(machineA.machineId);
  markers[tenantB]!.push(machineB.machineId);
  addId(tenantA, 'id', machineA.machineId);
  addId(tenantB, 'id', machineB.machineId);
  secrets.push(machineA.agentToken, machineB.agentToken);
  const unused = await registrationToken(app.url, admin, tenantA);
  secrets.push(unused);
  const userA = cast.actors.user;
  await ok(
    await api(app.url, 'POST', `/api/remote/machines/${machineA.machineId}/assign`, {
      auth: admin,
      body: { user_id: userA.id, permission: 'user' },
    }),
    'assign',
  );

  // A remote session per tenant and a proxy token for A's, issued as the session workflow does.
  const tokens = proxyTokenService({ database: app.database, settings: app.settings, now: app.deps.now });
  const proxyTokens: Record<number, string> = {};
  for (const [tenant, machine, owner] of [
    [tenantA, machineA, userA.id!],
    [tenantB, machineB, cast.actors.other_tenant_admin.id!],
  ] as const) {
    const sessionId = randomUUID();
    const { db, t } = app.database;
    await db.insert(t.agentSessions).values({
      sessionId,
      tenantId: tenant,
      toolName: 'cli_alpha',
      hostName: machine.machineId,
      userId: owner,
      status: 'active',
      workspaceType: 'remote',
      remoteMachineId: machine.machineId,
    });
    const { token } = await tokens.issue({ sessionId, userId: owner, tenantId: tenant, provider: 'openai' });
    proxyTokens[tenant] = token;
    secrets.push(token);
    markers[tenant]!.push(sessionId);
    addId(tenant, 'id', sessionId);
    addId(tenant, 'session_id', sessionId);
  }

  // Usage: uploaded messages for a user of each tenant (the upload key attributes them by username).
  const day = new Date().toISOString().slice(0, 10);
  for (const [tenant, actor] of [
    [tenantA, cast.actors.user],
    [tenantB, cast.actors.other_tenant_admin],
  ] as const) {
    const host = `fuzz-host-${randomUUID().slice(0, 8)}`;
    markers[tenant]!.push(host);
    await ok(
      await api(app.url, 'POST', '/api/upload/batch', {
        headers: { 'x-upload-auth': app.settings.SVC_UPLOAD_AUTH_KEY! },
        body: {
          messages: [1, 2, 3].map((n) => ({
            message_id: randomUUID(),
            role: n === 1 ? 'user' : 'assistant',
            content: `fuzz message ${n}`,
            input_tokens: 100 * n,
            output_tokens: 10 * n,
            timestamp: `${day}T0${n}:00:00Z`,
            date: day,
            tool_name: 'claude',
            sender_name: actor.session!.user.username,
            host_name: host,
            model: 'claude-test',
          })),
        },
      }),
      'upload',
      [200, 201, 207],
    );
  }

  // Alerts: one per tenant (tenant-wide) and one for the tenant A user.
  for (const [tenant, userId] of [
    [tenantA, null],
    [tenantA, userA.id!],
    [tenantB, null],
  ] as const) {
    const alertId = randomUUID();
    await raiseAlert(app.database, {
      alertId,
      alertType: 'security',
      severity: 'warning',
      title: `fuzz alert ${alertId.slice(0, 8)}`,
      message: null,
      userId,
      tenantId: tenant,
    });
    markers[tenant]!.push(alertId);
    addId(tenant, 'alert_id', alertId);
  }

  // Password hashes of every user (whatever world they came from).
  const hashes = await app.database.sql.query<{ password_hash: string | null }>(
    'SELECT password_hash FROM users',
  );
  for (const h of hashes) if (h.password_hash) secrets.push(h.password_hash);

  const sessionRole = (name: ActorName): FuzzRole => {
    const a = cast.actors[name];
    return {
      name,
      headers: a.session ? { Authorization: `Bearer ${a.session.token}` } : {},
      schemes: a.session
        ? ['session', 'anonymous']
        : ['anonymous', 'session', 'agentToken', 'proxyToken', 'uploadKey'],
      tenantId: a.tenant === 'A' ? tenantA : a.tenant === 'B' ? tenantB : null,
      ownToken: a.session?.token,
    };
  };
  const sessionTokens = Object.values(cast.actors).flatMap((a) => (a.session ? [a.session.token] : []));
  secrets.push(...sessionTokens);

  const roles: FuzzRole[] = [
    sessionRole('anonymous'),
    sessionRole('readonly'),
    sessionRole('user'),
    sessionRole('manager'),
    sessionRole('tenant_admin'),
    sessionRole('other_tenant_admin'),
    sessionRole('legacy_admin'),
    sessionRole('platform_admin'),
    {
      name: 'agent',
      headers: { Authorization: `Bearer ${machineA.agentToken}`, 'X-Machine-Id': machineA.machineId },
      schemes: ['agentToken'],
      tenantId: tenantA,
      ownToken: machineA.agentToken,
    },
    {
      name: 'proxy_token',
      headers: { Authorization: `Bearer ${proxyTokens[tenantA]}` },
      schemes: ['proxyToken'],
      tenantId: tenantA,
      ownToken: proxyTokens[tenantA],
    },
    {
      name: 'upload_key',
      headers: { 'X-Upload-Auth': app.settings.SVC_UPLOAD_AUTH_KEY! },
      schemes: ['uploadKey'],
      tenantId: null,
      ownToken: app.settings.SVC_UPLOAD_AUTH_KEY,
    },
  ];
  return { tenantA, tenantB, roles, secrets: [...new Set(secrets)], tenantMarkers: markers, ids };
}
