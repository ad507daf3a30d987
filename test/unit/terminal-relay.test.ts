// Pure parts of the live terminal relay: which upgrade paths are the terminal's, which Origins may open
// one, and the relay terminal's input queue (order, bound, hand-back, end).
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { MAX_PENDING_INPUT_BYTES, RelayTerminal } from '../../api/terminal-relay-hub.ts';
import { originAllowed, terminalSessionId } from '../../api/terminal-socket.ts';
import type { AppDeps } from '../../services/deps.ts';

describe('terminal relay upgrade path', () => {
  it('takes only /api/remote/sessions/<id>/terminal, with or without a query', () => {
    assert.equal(terminalSessionId('/api/remote/sessions/abc-1/terminal'), 'abc-1');
    assert.equal(terminalSessionId('/api/remote/sessions/abc-1/terminal?cols=80&rows=24'), 'abc-1');
    for (const other of [
      undefined,
      '/socket.io/?EIO=4&transport=websocket',
      '/api/remote/sessions//terminal',
      '/api/remote/sessions/abc/terminal/',
      '/api/remote/sessions/abc/output',
      '/api/remote/sessions/a/b/terminal',
      `/api/remote/sessions/${'x'.repeat(65)}/terminal`,
      '/API/remote/sessions/abc/terminal',
    ])
      assert.equal(terminalSessionId(other), undefined, String(other));
  });

  it('is linear on a long hostile path', () => {
    const started = performance.now();
    assert.equal(terminalSessionId(`/${'/'.repeat(200_000)}terminal`), undefined);
    assert.ok(performance.now() - started < 200);
  });
});

describe('terminal relay Origin check', () => {
  const deps = {
    settings: { SVC_PUBLIC_URL: 'https://svc.example.com', SVC_INSTANCE_URL: undefined },
  } as unknown as AppDeps;
  const req = (origin: string | undefined, host = '127.0.0.1:19888') =>
    ({ headers: { origin, host } }) as unknown as IncomingMessage;
  it('accepts its own origins and a client without Origin', () => {
    assert.ok(originAllowed(req('http://127.0.0.1:19888'), deps, 'http://10.0.0.5:19888'));
    assert.ok(originAllowed(req('https://svc.example.com'), deps, 'http://10.0.0.5:19888'));
    assert.ok(originAllowed(req('http://10.0.0.5:19888'), deps, 'http://10.0.0.5:19888'));
    assert.ok(originAllowed(req(undefined), deps, 'http://10.0.0.5:19888'));
  });
  it('refuses other sites, other ports, and garbage', () => {
    for (const o of [
      'https://evil.example',
      'http://127.0.0.1:8080',
      'https://svc.example.com.evil.example',
      'null',
      '',
    ]) {
      assert.equal(originAllowed(req(o), deps, 'http://10.0.0.5:19888'), false, o);
    }
  });
});

describe('relay terminal queue', () => {
  const make = () => {
    const out: Buffer[] = [];
    const closes: [number, string][] = [];
    let ended = 0;
    const t = new RelayTerminal(
      's',
      'm',
      { output: (b) => out.push(b), closed: (c, r) => closes.push([c, r]) },
      () => {
        ended++;
      },
    );
    return { t, out, closes, ended: () => ended };
  };
  const never = new AbortController().signal;

  it('hands keystrokes to the held poll in order, and at once when they are already waiting', async () => {
    const { t } = make();
    const held = t.take(5000, never);
    t.push({ data: 'YQ==' });
    assert.deepEqual(await held, [{ data: 'YQ==' }]);
    t.push({ data: 'Yg==' });
    t.push({ resize: { cols: 10, rows: 5 } });
    assert.deepEqual(await t.take(5000, never), [{ data: 'Yg==' }, { resize: { cols: 10, rows: 5 } }]);
  });

  it('gives input back in front after a lost poll, and refuses past its bound', async () => {
    const { t } = make();
    t.push({ data: 'Yw==' });
    const taken = await t.take(1000, never);
    t.push({ data: 'ZA==' });
    t.giveBack(taken!);
    assert.deepEqual(await t.take(1000, never), [{ data: 'Yw==' }, { data: 'ZA==' }]);
    assert.equal(t.push({ data: 'x'.repeat(MAX_PENDING_INPUT_BYTES + 1) }), false);
  });

  it('a newer poll releases the held one; an aborted poll answers empty', async () => {
    const { t } = make();
    const first = t.take(5000, never);
    const ac = new AbortController();
    const second = t.take(5000, ac.signal);
    assert.deepEqual(await first, []);
    ac.abort();
    assert.deepEqual(await second, []);
  });

  it('ends once: the held poll gets null, the sink one close, later input and output are dropped', async () => {
    const { t, out, closes, ended } = make();
    const held = t.take(5000, never);
    t.end(1000, '{"reason":"exited"}');
    t.end(1011, 'again');
    assert.equal(await held, null);
    assert.equal(await t.take(5000, never), null);
    assert.equal(t.push({ data: 'YQ==' }), false);
    t.output(Buffer.from('late'));
    assert.deepEqual(closes, [[1000, '{"reason":"exited"}']]);
    assert.equal(out.length, 0);
    assert.equal(ended(), 1);
  });
});
