// The low findings of issue 25 (item 6) against the real app: `X-Content-Type-Options: nosniff` on
// every answer; the socket.io /alerts namespace refuses a foreign Origin; another tenant's user and a
// missing user get the same answer (user administration and machine assignments); the terminal
// channel is given to agents as the public URL, not the plain-http listen address.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { io } from 'socket.io-client';
import { createTenant } from '../support/actors.ts';
import { ADMIN, startTestApp, type TestApp } from '../support/harness.ts';
import {
  agentMessage,
  assign,
  boundSession,
  buildRemoteCast,
  type FakeMachine,
  person,
  type RemoteCast,
  registerFakeMachine,
  scriptedAgent,
  waitUntil,
} from '../support/remote.ts';
import { api, login, type Session } from '../support/session.ts';
import { openTerminal, terminalUrl } from '../support/terminal-client.ts';

const PUBLIC_URL = 'https://svc.example.test';
const SIBLING = 'https://api-2.svc.example.test';

let app: TestApp;
let admin: Session;
let cast: RemoteCast;
let machine: FakeMachine;
let agent: ReturnType<typeof scriptedAgent>;
before(async () => {
  app = await startTestApp({ env: { SVC_PUBLIC_URL: PUBLIC_URL, SVC_WEB_CONNECT_ORIGINS: SIBLING } });
  admin = await login(app.url, ADMIN.username, ADMIN.password);
  cast = await buildRemoteCast(app);
  machine = await registerFakeMachine(app.url, cast.admin.session, cast.tenantId);
  await agentMessage(app.url, machine);
  agent = scriptedAgent(app.url, machine);
  const made = await assign(app.url, admin, machine.machineId, cast.machineAdmin.id, 'admin');
  assert.equal(made.status, 200);
});
after(async () => {
  await agent?.stop();
  await app?.close();
});

describe('nosniff', () => {
  test('JSON, errors, 404s and SSE all carry X-Content-Type-Options: nosniff', async () => {
    const answers = [
      await fetch(`${app.url}/livez`),
      await fetch(`${app.url}/api/no-such-route`),
      await fetch(`${app.url}/api/auth/me`),
      await fetch(`${app.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"broken":',
      }),
    ];
    assert.deepEqual(
      answers.map((r) => r.status),
      [200, 404, 401, 400],
    );
    for (const r of answers) assert.equal(r.headers.get('x-content-type-options'), 'nosniff', r.url);
    const abort = new AbortController();
    const sse = await fetch(`${app.url}/api/alerts/stream`, { headers: admin.headers, signal: abort.signal });
    assert.equal(sse.status, 200);
    assert.match(sse.headers.get('content-type') ?? '', /text\/event-stream/);
    assert.equal(sse.headers.get('x-content-type-options'), 'nosniff');
    abort.abort();
  });
});

describe('socket.io /alerts Origin', () => {
  /** Connects with an explicit Origin header; resolves 'ready' or the connect error's message. */
  function connect(origin: string | undefined): Promise<string> {
    const sock = io(`${app.url}/alerts`, {
      transports: ['websocket'],
      reconnection: false,
      auth: { token: admin.token },
      extraHeaders: origin ? { origin } : {},
    });
    return new Promise<string>((resolve) => {
      sock.once('ready', () => resolve('ready'));
      sock.once('connect_error', (e) => resolve(`refused: ${e.message}`));
    }).finally(() => sock.close());
  }

  test('a foreign Origin is refused; same-origin, the public URL and configured origins connect', async () => {
    assert.match(await connect('https://evil.example'), /^refused/);
    assert.match(await connect('http://localhost.evil.example'), /^refused/);
    assert.equal(await connect(app.url), 'ready');
    assert.equal(await connect(PUBLIC_URL), 'ready');
    assert.equal(await connect(SIBLING), 'ready');
    // Non-browser clients send no Origin: still authenticated by their token.
    assert.equal(await connect(undefined), 'ready');
  });
});

describe('another tenant user answers as a missing one', () => {
  test('user administration, as a tenant admin', async () => {
    const tenantB = await createTenant(app, admin);
    const foreign = await person(app, admin, 'user', tenantB);
    const tenantAdmin = await person(app, admin, 'tenant_admin', cast.tenantId);
    for (const [method, suffix, body] of [
      ['PUT', '', { role: 'user' }],
      ['PUT', '/password', { password: 'another-password-123' }],
      ['DELETE', '', undefined],
    ] as const) {
      const theirs = await api(app.url, method, `/api/admin/users/${foreign.id}${suffix}`, {
        auth: tenantAdmin.session,
        body,
      });
      const missing = await api(app.url, method, `/api/admin/users/987654321${suffix}`, {
        auth: tenantAdmin.session,
        body,
      });
      assert.equal(theirs.status, missing.status, `${method} ${suffix}`);
      assert.deepEqual(theirs.body, missing.body, `${method} ${suffix}`);
    }
  });

  test('machine assignment, as a machine admin', async () => {
    const tenantB = await createTenant(app, admin);
    const foreign = await person(app, admin, 'user', tenantB);
    const theirs = await assign(app.url, cast.machineAdmin.session, machine.machineId, foreign.id, 'user');
    const missing = await assign(app.url, cast.machineAdmin.session, machine.machineId, 987654321, 'user');
    assert.equal(theirs.status, 400);
    assert.equal(theirs.status, missing.status);
    assert.deepEqual(theirs.body, missing.body);
  });
});

describe('terminal channel', () => {
  test('terminal.open names the public URL as relay_url, never the plain-http listen address', async () => {
    const sessionId = await boundSession(app, cast, machine, cast.userA.id);
    assert.equal((await assign(app.url, admin, machine.machineId, cast.userA.id, 'user')).status, 200);
    const term = openTerminal(terminalUrl(app.url, sessionId), { token: cast.userA.session.token });
    try {
      const open = await waitUntil('terminal.open reaches the agent', async () =>
        agent.received.find((c) => c.command_type === 'terminal.open' && c.session_id === sessionId),
      );
      assert.equal(open.payload.relay_url, PUBLIC_URL);
    } finally {
      term.close();
    }
  });
});
