// The browser terminal's close handling (web/src/pages/remote/terminal-reconnect.ts): 3010 with the
// owner's address reconnects to that instance's terminal path (ws/wss from http/https), bounded hops,
// and every other close (or a 3010 with a missing or non-http owner) stops with a message in words.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  closeMessage,
  decideOnClose,
  MAX_HOPS,
  TERMINAL_NOT_OWNER,
  terminalUrl,
} from '../../web/src/pages/remote/terminal-reconnect.ts';

const size = { cols: 100, rows: 30 };

test('terminalUrl maps the page origin to ws/wss and encodes the session id', () => {
  assert.equal(
    terminalUrl('http://127.0.0.1:19888', 'abc'),
    'ws://127.0.0.1:19888/api/remote/sessions/abc/terminal',
  );
  assert.equal(
    terminalUrl('https://svc.example.com', 'a/b?c', size),
    'wss://svc.example.com/api/remote/sessions/a%2Fb%3Fc/terminal?cols=100&rows=30',
  );
});

test('3010 with an http(s) owner reconnects to the owner instance, keeping the size', () => {
  const d = decideOnClose(
    TERMINAL_NOT_OWNER,
    JSON.stringify({ owner: 'http://10.0.0.2:19888' }),
    's1',
    0,
    size,
  );
  assert.deepEqual(d, {
    action: 'reconnect',
    url: 'ws://10.0.0.2:19888/api/remote/sessions/s1/terminal?cols=100&rows=30',
  });
  const tls = decideOnClose(
    TERMINAL_NOT_OWNER,
    JSON.stringify({ owner: 'https://b.example.com/base/' }),
    's1',
    1,
  );
  assert.deepEqual(tls, { action: 'reconnect', url: 'wss://b.example.com/api/remote/sessions/s1/terminal' });
});

test('3010 stops after MAX_HOPS redirects, and on a missing, malformed or non-http owner', () => {
  const owner = JSON.stringify({ owner: 'http://10.0.0.2:19888' });
  assert.equal(decideOnClose(TERMINAL_NOT_OWNER, owner, 's', MAX_HOPS).action, 'stop');
  assert.equal(decideOnClose(TERMINAL_NOT_OWNER, owner, 's', MAX_HOPS - 1).action, 'reconnect');
  for (const reason of [
    '',
    'not json',
    '{}',
    '{"owner":42}',
    '{"owner":"javascript:alert(1)"}',
    '{"owner":"ws://x"}',
    '{"owner":"::"}',
  ]) {
    const d = decideOnClose(TERMINAL_NOT_OWNER, reason, 's', 0);
    assert.equal(d.action, 'stop', reason);
  }
});

test('other close codes stop with the relay reason in words', () => {
  assert.deepEqual(decideOnClose(1000, '{"reason":"exited"}', 's', 0), {
    action: 'stop',
    message: 'The terminal closed: the shell exited',
  });
  assert.equal(
    decideOnClose(1008, JSON.stringify({ error: 'Session not found', status: 404 }), 's', 0).action,
    'stop',
  );
  assert.equal(
    closeMessage(1008, JSON.stringify({ error: 'Session not found', status: 404 })),
    'The terminal closed: Session not found',
  );
  assert.equal(closeMessage(1000, '{"reason":"session_ended"}'), 'The terminal closed: the session ended');
  assert.equal(closeMessage(1009, ''), 'The terminal closed: too much input at once');
  assert.equal(closeMessage(1006, ''), 'The terminal closed (code 1006)');
  assert.equal(closeMessage(1000, ''), 'The terminal closed');
});
