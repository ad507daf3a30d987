// The terminal relay's Origin check with sibling instances (api/terminal-socket.ts `originAllowed`): a
// page served by another instance named in SVC_WEB_CONNECT_ORIGINS follows a 3010 here with its own
// Origin, and is accepted; any other origin, a look-alike host or another port of a sibling is not.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { it } from 'node:test';
import { originAllowed } from '../../api/terminal-socket.ts';
import type { AppDeps } from '../../services/deps.ts';

const deps = {
  settings: {
    SVC_PUBLIC_URL: undefined,
    SVC_INSTANCE_URL: 'http://10.0.0.5:19888',
    SVC_WEB_CONNECT_ORIGINS: ['http://10.0.0.6:19888', 'https://node-c.internal.example'],
  },
} as unknown as AppDeps;
const req = (origin: string | undefined) =>
  ({ headers: { origin, host: '10.0.0.5:19888' } }) as unknown as IncomingMessage;

it('accepts pages of the sibling instances listed in SVC_WEB_CONNECT_ORIGINS', () => {
  for (const o of ['http://10.0.0.6:19888', 'https://node-c.internal.example', 'http://10.0.0.5:19888'])
    assert.ok(originAllowed(req(o), deps, 'http://10.0.0.5:19888'), o);
});

it('refuses other origins, other ports of a sibling and look-alike hosts', () => {
  for (const o of [
    'http://10.0.0.6:8080',
    'https://node-c.internal.example.evil.example',
    'https://evil.example',
    'null',
  ])
    assert.equal(originAllowed(req(o), deps, 'http://10.0.0.5:19888'), false, o);
});

it('without siblings configured (the setting absent), only its own origins pass', () => {
  const alone = { settings: { SVC_INSTANCE_URL: 'http://10.0.0.5:19888' } } as unknown as AppDeps;
  assert.equal(originAllowed(req('http://10.0.0.6:19888'), alone, 'http://10.0.0.5:19888'), false);
  assert.ok(originAllowed(req('http://10.0.0.5:19888'), alone, 'http://10.0.0.5:19888'));
});
