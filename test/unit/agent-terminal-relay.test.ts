// The agent's side of the terminal channel (issue 25 item 6): the agent token travels with every call
// to the relay, so an agent that talks to its server over https refuses a plain-http relay_url (the
// server names SVC_INSTANCE_URL / SVC_PUBLIC_URL: api/routes/remote/public-url.ts agentRelayUrl).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Logger } from '../../agent/log.ts';
import { TerminalManager } from '../../agent/terminal.ts';
import { agentRelayUrl } from '../../api/routes/remote/public-url.ts';

const manager = (serverUrl: string) =>
  new TerminalManager(
    {
      agentToken: 'agent-token',
      machineId: 'm-1',
      serverUrl,
      workDir: '/tmp',
      workRoots: { roots: ['/tmp'], protectedDirs: [] },
      isSessionActive: () => false,
      sessionSandbox: () => undefined,
    },
    new Logger('ERROR'),
  );
const open = (serverUrl: string, relay: string) =>
  manager(serverUrl).open({
    command_id: 'c-1',
    command_type: 'terminal.open',
    session_id: 's-1',
    payload: { terminal_id: 't-1', relay_url: relay },
  });

describe('terminal relay_url', () => {
  it('an https server: a plain-http relay is refused before anything is sent', {
    skip: process.platform !== 'linux',
  }, () => {
    const answer = open('https://svc.example.test', 'http://10.0.0.5:3000');
    assert.equal(answer.ok, false);
    assert.match(String(answer.error), /must be https when the server is/);
    // An https relay passes that check (and stops at the next one: the session is unknown here).
    assert.match(
      String(open('https://svc.example.test', 'https://api-2.example.test').error),
      /unknown session/,
    );
    assert.match(String(open('http://127.0.0.1:3000', 'http://127.0.0.1:3000').error), /unknown session/);
  });

  it('the server names the instance URL, else the public URL, never the listen address when either is set', () => {
    const listen = 'http://0.0.0.0:3000';
    assert.equal(
      agentRelayUrl({ SVC_PUBLIC_URL: 'https://svc.example.test/' }, listen),
      'https://svc.example.test',
    );
    assert.equal(
      agentRelayUrl(
        { SVC_PUBLIC_URL: 'https://svc.example.test', SVC_INSTANCE_URL: 'https://api-2.example.test' },
        listen,
      ),
      'https://api-2.example.test',
    );
    assert.equal(agentRelayUrl({}, listen), listen);
  });
});
