// The browser side of the live terminal relay: a WebSocket at
//   /api/remote/sessions/<session id>/terminal[?cols=80&rows=24]
// on the API's own HTTP server (attached in bin/runtime.ts `listen`, next to socket.io).
//
// Before the upgrade (plain HTTP answers, no WebSocket): the Host header must name this server (as for
// every route, api/middleware/host-check.ts) and an Origin, when sent, must be this server's own origin
// (its Host, SVC_PUBLIC_URL, SVC_INSTANCE_URL, or a sibling instance named in SVC_WEB_CONNECT_ORIGINS,
// whose pages reconnect here after a 3010): a page on another site cannot open a terminal with the
// visitor's cookie (cross-site WebSocket hijacking). Browsers always send Origin; other clients may omit it.
// After the upgrade, refusals are close frames, which a browser can read (an HTTP status it cannot):
//   1008 + {"error","status"}   not authenticated (401), password change required (403), a session the
//                               caller may not see or that does not exist (404: existence not revealed),
//                               a session that is not live (409). Same rules as GET /api/remote/sessions/<id>:
//                               its owner, a system admin, or a machine admin of its machine;
//                               403 when settings remote.terminal_access narrows it (`admins`, `off`).
//   3010 + {"owner": url}       another instance holds this session's relay: reconnect there.
//   1011 + {"error"}            the agent refused or did not answer the terminal.open command.
//   1000 + {"reason"}           the terminal ended (shell exit: "exited", session end: "session_ended").
//   1009                        a frame over 64 KiB, or keystrokes piling up past 1 MiB unread by the agent.
// Frames: binary frames from the browser are keystrokes; text frames are JSON control frames
// {"type":"resize","cols","rows"} or {"type":"input","data":"<text>"}. Binary frames to the browser are
// terminal output. Nothing of either is stored or logged.
import type { Server as HttpServer, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Request } from 'express';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { AppError } from '../domain/errors.ts';
import { allowedHostNames, isAllowedHost } from '../domain/http/allowed-hosts.ts';
import { mayOpenTerminal } from '../domain/remote-authority.ts';
import { acceptsCommands } from '../domain/remote-session-state.ts';
import { writeAudit } from '../services/audit.ts';
import type { AppDeps } from '../services/deps.ts';
import { remoteCommands } from '../services/remote-commands.ts';
import { resolveSession } from './middleware/auth.ts';
import { remoteAccess } from './routes/remote/access.ts';
import { agentRelayUrl } from './routes/remote/public-url.ts';
import { type RelayTerminal, terminalRelayHub } from './terminal-relay-hub.ts';

export const TERMINAL_NOT_OWNER = 3010;
export const MAX_FRAME_BYTES = 64 * 1024;
/** How long the agent has to answer terminal.open. */
export const OPEN_ANSWER_MS = 15_000;
/** A browser that reads slower than this much queued output is dropped. */
const MAX_BUFFERED_OUTPUT = 8 * 1024 * 1024;

/** The session id of a terminal path, or undefined for any other path (no regex on input). */
export function terminalSessionId(url: string | undefined): string | undefined {
  const path = (url ?? '').split('?')[0]!;
  const parts = path.split('/');
  if (parts.length !== 6 || parts[0] !== '' || parts[1] !== 'api' || parts[2] !== 'remote') return undefined;
  if (parts[3] !== 'sessions' || parts[5] !== 'terminal') return undefined;
  const id = parts[4]!;
  return id.length >= 1 && id.length <= 64 ? id : undefined;
}

const dimension = (v: unknown, dflt: number, max: number) => {
  const n = typeof v === 'number' ? v : Number.parseInt(String(v ?? ''), 10);
  return Number.isInteger(n) && n >= 1 && n <= max ? n : dflt;
};

/** Close reasons are at most 123 bytes. */
const reasonOf = (o: Record<string, unknown>) => {
  const s = JSON.stringify(o);
  return Buffer.byteLength(s) <= 123 ? s : JSON.stringify({ error: 'terminal closed' });
};

export function originAllowed(req: IncomingMessage, deps: AppDeps, instanceUrl: string): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  let host: string;
  try {
    host = new URL(origin).host.toLowerCase();
  } catch {
    return false;
  }
  // The sibling instances (SVC_WEB_CONNECT_ORIGINS) too: a page served by another instance follows a
  // 3010 here, and its browser sends that page's Origin (test/browser/terminal-hop.test.ts).
  const own = [
    req.headers.host,
    deps.settings.SVC_PUBLIC_URL,
    deps.settings.SVC_INSTANCE_URL,
    instanceUrl,
    ...(deps.settings.SVC_WEB_CONNECT_ORIGINS ?? []),
  ]
    .filter((v): v is string => !!v)
    .map((v) => {
      try {
        return v.includes('://') ? new URL(v).host.toLowerCase() : v.toLowerCase();
      } catch {
        return '';
      }
    });
  return own.includes(host);
}

function refuseUpgrade(socket: Duplex, status: number, message: string) {
  const body = JSON.stringify({ error: message });
  socket.end(
    `HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Misdirected Request'}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

export function attachTerminalSocket(
  server: HttpServer,
  deps: AppDeps,
  listenUrl: string,
): { close(): void } {
  const hub = terminalRelayHub(deps);
  hub.instanceUrl = (deps.settings.SVC_INSTANCE_URL ?? listenUrl).replace(/\/+$/, '');
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const hosts = allowedHostNames({
    publicUrl: deps.settings.SVC_PUBLIC_URL,
    bindHost: deps.settings.HOST,
    extra: [
      ...deps.settings.SVC_ALLOWED_HOSTS,
      ...(deps.settings.SVC_INSTANCE_URL ? [new URL(deps.settings.SVC_INSTANCE_URL).host] : []),
    ],
  });
  const commands = remoteCommands(deps);
  const access = remoteAccess(deps);

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const sessionId = terminalSessionId(req.url);
    if (!sessionId) return; // socket.io (/socket.io/) or nothing: not ours
    if (!isAllowedHost(req.headers.host, hosts))
      return refuseUpgrade(socket, 421, 'This server does not answer for that Host name');
    if (!originAllowed(req, deps, hub.instanceUrl))
      return refuseUpgrade(socket, 403, 'Cross-origin terminal connections are refused');
    wss.handleUpgrade(req, socket, head, (ws) => {
      void accept(ws, req, sessionId).catch((err) => {
        deps.logger.error({ err, session_id: sessionId }, 'terminal relay: connection failed');
        ws.close(1011, reasonOf({ error: 'internal error' }));
      });
    });
  };
  server.on('upgrade', onUpgrade);

  async function accept(ws: WebSocket, req: IncomingMessage, sessionId: string) {
    // Frames that arrive while the checks run are kept, in order, for the terminal.
    const early: { data: RawData; binary: boolean }[] = [];
    const collect = (data: RawData, binary: boolean) => early.push({ data, binary });
    ws.on('message', collect);
    ws.on('error', () => undefined);
    const refuse = (status: number, error: string) => ws.close(1008, reasonOf({ error, status }));

    const r = await resolveSession(deps, {
      headers: { cookie: req.headers.cookie, authorization: req.headers.authorization },
      query: {},
    } as unknown as Request);
    if (!r.ok) return refuse(r.error instanceof AppError ? r.error.status : 401, r.error.message);
    if (r.mustChangePassword) return refuse(403, 'Password change required');
    const fake = {
      auth: r.auth,
      headers: req.headers,
      ip: req.socket.remoteAddress,
      log: deps.logger,
    } as unknown as Request;
    const audit = (action: string, success: boolean, details: Record<string, unknown>) =>
      writeAudit(deps, fake, {
        action,
        resourceType: 'remote_session',
        resourceId: sessionId,
        success,
        details,
      });

    let found: Awaited<ReturnType<typeof access.visibleSession>>;
    try {
      found = await access.visibleSession(fake, sessionId);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      await audit('REMOTE_TERMINAL_OPEN', false, { reason: 'not_visible' });
      return refuse(err.status, err.message);
    }
    const session = found.session;
    const terminalAccess = deps.settings.remote.terminal_access;
    if (!mayOpenTerminal(found.standing, found.isOwner, terminalAccess)) {
      await audit('REMOTE_TERMINAL_OPEN', false, { reason: 'terminal_access', setting: terminalAccess });
      return refuse(
        403,
        terminalAccess === 'off'
          ? 'Terminals are turned off on this server (remote.terminal_access)'
          : 'Only machine administrators may open a terminal on this server (remote.terminal_access)',
      );
    }
    if (!acceptsCommands(session.status) || !session.remoteMachineId) {
      await audit('REMOTE_TERMINAL_OPEN', false, { reason: `session_${session.status}` });
      return refuse(409, `The session is ${session.status}`);
    }
    const claim = await hub.registry.claim(sessionId, hub.instanceUrl);
    if (!claim.owner) return ws.close(TERMINAL_NOT_OWNER, reasonOf({ owner: claim.instanceUrl }));
    if (ws.readyState !== ws.OPEN) {
      if (!hub.sessions().includes(sessionId)) await hub.registry.release(sessionId);
      return;
    }

    const url = new URL(req.url ?? '/', 'http://x');
    const cols = dimension(url.searchParams.get('cols'), 80, 1000);
    const rows = dimension(url.searchParams.get('rows'), 24, 1000);
    let bytesIn = 0;
    let bytesOut = 0;
    const terminal: RelayTerminal = hub.open(sessionId, session.remoteMachineId, {
      output: (bytes) => {
        bytesOut += bytes.length;
        if (ws.bufferedAmount > MAX_BUFFERED_OUTPUT)
          return terminal.end(1009, reasonOf({ error: 'browser too slow' }));
        ws.send(bytes, { binary: true });
      },
      closed: (code, reason) => {
        if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
        void audit('REMOTE_TERMINAL_CLOSE', true, {
          terminal_id: terminal.id,
          bytes_in: bytesIn,
          bytes_out: bytesOut,
        });
      },
    });
    const onFrame = (data: RawData, binary: boolean) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      let ok = true;
      if (binary) {
        bytesIn += buf.length;
        ok = terminal.push({ data: buf.toString('base64') });
      } else {
        let frame: { type?: unknown; cols?: unknown; rows?: unknown; data?: unknown };
        try {
          frame = JSON.parse(buf.toString('utf8'));
        } catch {
          return; // not a control frame: ignored
        }
        if (frame?.type === 'resize')
          ok = terminal.push({
            resize: { cols: dimension(frame.cols, cols, 1000), rows: dimension(frame.rows, rows, 1000) },
          });
        else if (frame?.type === 'input' && typeof frame.data === 'string') {
          const bytes = Buffer.from(frame.data, 'utf8');
          bytesIn += bytes.length;
          ok = terminal.push({ data: bytes.toString('base64') });
        }
      }
      if (!ok) terminal.end(1009, reasonOf({ error: 'input not read by the agent' }));
    };
    ws.off('message', collect);
    for (const f of early) onFrame(f.data, f.binary);
    ws.on('message', onFrame);
    ws.on('close', () => terminal.end(1000, reasonOf({ reason: 'browser_closed' })));

    const { commandId } = await commands.queue({
      machineId: session.remoteMachineId,
      sessionId,
      commandType: 'terminal.open',
      payload: {
        terminal_id: terminal.id,
        relay_url: agentRelayUrl(deps.settings, hub.instanceUrl),
        project_path: session.projectPath,
        cols,
        rows,
      },
      ttlMs: OPEN_ANSWER_MS,
    });
    await audit('REMOTE_TERMINAL_OPEN', true, {
      terminal_id: terminal.id,
      command_id: commandId,
      instance: hub.instanceUrl,
    });
    const answer = await commands.waitForResponse(commandId, OPEN_ANSWER_MS);
    if (terminal.ended) return;
    if (!answer)
      return terminal.end(1011, reasonOf({ error: 'The agent did not open the terminal in time' }));
    if (answer.payload.ok === false)
      terminal.end(
        1011,
        reasonOf({ error: String(answer.payload.error ?? 'The agent refused').slice(0, 90) }),
      );
  }

  return {
    close() {
      server.off('upgrade', onUpgrade);
      hub.closeAll();
      for (const c of wss.clients) c.terminate();
      wss.close();
    },
  };
}
