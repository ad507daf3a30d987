// project_path and model over the real API and the real agent (issue 8 item 8): the server refuses
// unsafe shapes with 400 before anything reaches a machine; the agent refuses a directory outside its
// work roots or holding its own token, and the browser sees why in the session output.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/harness.ts';
import {
  type AgentProcess,
  assign,
  buildRemoteCast,
  type RemoteCast,
  registrationToken,
  sessionOutput,
  startAgent,
  waitUntil,
} from '../support/remote.ts';
import { api } from '../support/session.ts';

let app: TestApp;
let cast: RemoteCast;
let agent: AgentProcess;
let machineId: string;

before(async () => {
  app = await startTestApp({ worker: true });
  cast = await buildRemoteCast(app);
  agent = startAgent({
    serverUrl: app.url,
    registrationToken: await registrationToken(app.url, cast.admin.session, cast.tenantId),
  });
  machineId = await waitUntil(
    'registered',
    async () => agent.config().agent_token && agent.config().machine_id,
  );
  await assign(app.url, cast.admin.session, machineId, cast.userA.id, 'user');
  await waitUntil(
    'online',
    async () =>
      (await api(app.url, 'GET', `/api/remote/machines/${machineId}`, { auth: cast.admin.session })).body
        .status === 'online',
  );
});
after(async () => {
  await agent?.stop();
  await app?.close();
});

const create = (body: Record<string, unknown>) =>
  api(app.url, 'POST', '/api/remote/sessions', {
    auth: cast.userA.session,
    body: { machine_id: machineId, ...body },
  });

test('the server refuses unsafe project_path and model shapes with 400', async () => {
  const PATH_RULE =
    'project_path: must be an absolute path (/..., ~/..., or C:\\...) of at most 500 characters, without NUL or ".." segments';
  for (const project_path of [
    '../../etc',
    'relative/dir',
    '/tmp/../etc',
    '/tmp/a\0b',
    'C:\\work\\..\\Windows',
  ]) {
    const r = await create({ project_path });
    assert.equal(r.status, 400, JSON.stringify(project_path));
    assert.equal(r.body.error, PATH_RULE);
  }
  assert.match((await create({ project_path: `/${'a'.repeat(500)}` })).body.error, /^project_path: /);
  for (const model of ['--dangerously-skip-permissions', 'a b', 'x'.repeat(129), '']) {
    const r = await create({ project_path: '/tmp', model });
    assert.equal(r.status, 400, model);
    assert.match(r.body.error, /^model: /);
  }
});

test('the agent refuses / and its own directory; the browser sees the reason', async () => {
  for (const [projectPath, reason] of [
    ['/', /is or contains the agent's own directory; refused/],
    [agent.dir, /is or contains the agent's own directory; refused/],
    ['/etc', /is outside this machine's work roots/],
  ] as const) {
    const created = await create({ project_path: projectPath });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const note = await waitUntil(`refusal for ${projectPath}`, async () =>
      (await sessionOutput(app.url, cast.userA.session, created.body.session_id))
        .filter((e) => e.stream === 'system')
        .map((e) => JSON.parse(e.data))
        .find((d) => d.event === 'start_refused'),
    );
    assert.match(note.message, reason);
    await waitUntil('session ended', async () => {
      const s = await api(app.url, 'GET', `/api/remote/sessions/${created.body.session_id}`, {
        auth: cast.userA.session,
      });
      return s.body.session.status !== 'active';
    });
  }
  const ok = await create({ project_path: mkdtempSync(path.join(os.tmpdir(), 'svc-project-')) });
  assert.equal(ok.status, 201);
  await waitUntil('started', async () =>
    (await sessionOutput(app.url, cast.userA.session, ok.body.session_id)).some(
      (e) => e.stream === 'system' && JSON.parse(e.data).event === 'started',
    ),
  );
});
