// Every endpoint is routed by exactly one route layer: a router mounted twice (the SAML router once
// was, in api/routes/index.ts and again inside the SSO router) runs its per-router middlewares twice
// and hides which mount answers. The walk is the OpenAPI document's own (api/openapi/router-walk.ts).
// store-independent: how the routers are mounted
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createApp } from '../../api/app.ts';
import { routedEndpoints } from '../../api/openapi/router-walk.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app?.close();
});

test('no endpoint is routed twice (the SAML metadata and ACS included)', () => {
  const { endpoints } = routedEndpoints(createApp(app.deps));
  const seen = new Map<string, number>();
  for (const e of endpoints) seen.set(`${e.method} ${e.path}`, (seen.get(`${e.method} ${e.path}`) ?? 0) + 1);
  assert.equal(seen.get('GET /api/sso/providers/:provider_name/metadata'), 1);
  assert.equal(seen.get('POST /api/sso/acs/:provider_name'), 1);
  assert.deepEqual(
    [...seen].filter(([, n]) => n > 1).map(([k, n]) => `${k} x${n}`),
    [],
  );
});
