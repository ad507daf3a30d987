// Poller behaviour that needs precise server answers, against a stub transport.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Logger } from '../../agent/log.ts';
import { Outbox } from '../../agent/outbox.ts';
import { Poller } from '../../agent/poller.ts';
import type { AgentEvent, Command, MessageRequest, MessageResponse } from '../../agent/protocol.ts';
import { type AgentTransport, AuthRejectedError, TransportError } from '../../agent/transport.ts';

const output = (seq: number, data: string): AgentEvent => ({
  type: 'output',
  session_id: 's',
  run_id: 'r',
  seq,
  stream: 'stdout',
  data,
  timestamp: '',
});

function setup(answer: (req: MessageRequest) => Promise<MessageResponse>) {
  const requests: MessageRequest[] = [];
  const transport = {
    message: async (req: MessageRequest, signal?: AbortSignal) => {
      requests.push(req);
      if (req.wait_ms > 0) {
        // Hold the long poll until the test ends.
        await new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve()));
        throw new TransportError('aborted');
      }
      return answer(req);
    },
  } as unknown as AgentTransport;
  const outbox = new Outbox();
  const commands: Command[] = [];
  const fatal: Error[] = [];
  const logs: string[] = [];
  const poller = new Poller(
    transport,
    outbox,
    { waitMs: 25000, heartbeatMs: 60000, baseDelayMs: 5, maxDelayMs: 20, batchDelayMs: 1 },
    () => ({ active_sessions: [], agent_version: 't' }),
    (c) => commands.push(...c),
    (e) => fatal.push(e),
    new Logger('DEBUG', (l) => logs.push(l)),
  );
  return { requests, outbox, poller, commands, fatal, logs };
}

describe('agent poller', () => {
  it('isolates and drops an event the server refuses with 400, delivering the others in order', async () => {
    const acked: number[] = [];
    const t = setup(async (req) => {
      if (req.events.some((e) => e.type === 'output' && e.data === 'poison'))
        throw new TransportError('bad event', 400);
      for (const e of req.events) if (e.type === 'output') acked.push(e.seq);
      return { commands: [] };
    });
    t.poller.start();
    for (let i = 1; i <= 9; i++) t.outbox.push(output(i, i === 5 ? 'poison' : 'fine'));
    t.poller.notify();
    await t.poller.drain(2000);
    await t.poller.stop();
    assert.deepEqual(acked, [1, 2, 3, 4, 6, 7, 8, 9]);
    assert.ok(t.logs.some((l) => l.includes('server refused an event; dropping it')));
  });

  it('keeps retrying (not dropping) on 503, 429 and network errors', async () => {
    let failures = 3;
    const acked: number[] = [];
    const t = setup(async (req) => {
      if (failures-- > 0) throw new TransportError('busy', failures === 1 ? 429 : 503);
      for (const e of req.events) if (e.type === 'output') acked.push(e.seq);
      return { commands: [] };
    });
    t.poller.start();
    t.outbox.push(output(1, 'a'));
    t.poller.notify();
    await t.poller.drain(2000);
    await t.poller.stop();
    assert.deepEqual(acked, [1]);
  });

  it('runs commands found in the answer to an event request, and stops on 401', async () => {
    let calls = 0;
    const t = setup(async () => {
      calls += 1;
      if (calls === 1) return { commands: [{ command_id: 'c1', command_type: 'ping', payload: {} }] };
      throw new AuthRejectedError('gone');
    });
    t.poller.start();
    t.outbox.push(output(1, 'a'));
    t.poller.notify();
    await t.poller.drain(2000);
    assert.deepEqual(
      t.commands.map((c) => c.command_id),
      ['c1'],
    );
    t.outbox.push(output(2, 'b'));
    t.poller.notify();
    const deadline = Date.now() + 2000;
    while (t.fatal.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.equal(t.fatal.length, 1);
    assert.equal(t.outbox.size, 1, 'the event is kept, not dropped, on 401');
    await t.poller.stop();
  });

  it('sends a heartbeat-only request only when no request went out for a heartbeat interval', async () => {
    // Every request carries the heartbeat. Long polls answered (empty) after 150 ms renew it well
    // within the 1 s interval: no heartbeat-only request. A poll then held for good: heartbeat-only
    // requests follow, one per interval.
    let hold = false;
    const requests: { at: number; req: MessageRequest }[] = [];
    const transport = {
      message: async (req: MessageRequest, signal?: AbortSignal) => {
        requests.push({ at: Date.now(), req });
        if (req.wait_ms === 0) return { commands: [] };
        await new Promise<void>((resolve) => {
          if (!hold) setTimeout(resolve, 150);
          signal?.addEventListener('abort', () => resolve());
        });
        if (signal?.aborted) throw new TransportError('aborted');
        return { commands: [] };
      },
    } as unknown as AgentTransport;
    const poller = new Poller(
      transport,
      new Outbox(),
      { waitMs: 25000, heartbeatMs: 1000, baseDelayMs: 5, maxDelayMs: 20 },
      () => ({ active_sessions: [], agent_version: 't' }),
      () => {},
      () => {},
      new Logger('ERROR', () => {}),
    );
    const heartbeatOnly = () => requests.filter((r) => r.req.wait_ms === 0 && r.req.events.length === 0);
    poller.start();
    await new Promise((r) => setTimeout(r, 2000));
    assert.ok(requests.length >= 3, `long polls renewed (${requests.length})`);
    assert.equal(
      heartbeatOnly().length,
      0,
      'no heartbeat-only request while polls renew within the interval',
    );
    assert.ok(
      requests.every((r) => r.req.heartbeat.agent_version === 't'),
      'each request carries it',
    );

    hold = true;
    await new Promise((r) => setTimeout(r, 2600));
    const beats = heartbeatOnly();
    assert.ok(beats.length >= 2, `heartbeat-only requests while the poll is held (${beats.length})`);
    for (let i = 1; i < beats.length; i++)
      assert.ok(beats[i]!.at - beats[i - 1]!.at >= 990, 'at most one per interval');
    await poller.stop();
  });
});
