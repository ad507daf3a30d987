// The socket.io namespace `/alerts` (spec document 2, "Events" 1: a WebSocket channel next to the SSE
// stream), on the API's own HTTP server. A client authenticates at the handshake with its session
// token (the `session_token` cookie, or `auth: {token}`), looked up by the same `resolveSession` as
// every HTTP route. Each socket joins rooms that encode what it may see (domain/alert-visibility.ts)
// and the min_severity of its user at connect time:
//   user:<id>:<min>       its own alerts
//   tenant:<t>:<min>      tenant-wide alerts of tenant t (tenant administrators)
//   all:<min>             every tenant-wide alert (system administrators)
// One subscription to the alert bus per server feeds the rooms: an alert goes to the rooms whose
// <min> is at or below its severity, and socket.io sends it once per socket even when several match.
//
// Several instances: the bus follows the alerts table, so every instance sees every alert (raised on
// any instance or worker) and emits it to its own sockets. A cross-instance adapter
// (@socket.io/postgres-adapter) would make each instance ALSO forward its emits to the others, i.e.
// deliver every alert twice; it is deliberately not used.
import type { Server as HttpServer, IncomingMessage } from 'node:http';
import type { Request } from 'express';
import { Server } from 'socket.io';
import { notificationPreferencesRepository } from '../db/repositories/alerts.ts';
import { alertViewer, SEVERITIES, type Severity, severitiesFrom } from '../domain/alert-visibility.ts';
import { type AlertEvent, alertBusFor } from '../services/alerts/bus.ts';
import type { AppDeps } from '../services/deps.ts';
import { resolveSession } from './middleware/auth.ts';
import { originAllowed } from './terminal-socket.ts';

export const ALERTS_NAMESPACE = '/alerts';

/** The mins at or below `severity`: the rooms' <min> values that receive it. */
const minsReceiving = (severity: string): Severity[] =>
  SEVERITIES.filter((m) => severitiesFrom(m).includes(severity as Severity));

export function roomsFor(a: Pick<AlertEvent, 'user_id' | 'tenant_id' | 'severity'>): string[] {
  const mins = minsReceiving(a.severity);
  if (a.user_id != null) return mins.map((m) => `user:${a.user_id}:${m}`);
  return mins.flatMap((m) =>
    a.tenant_id == null ? [`all:${m}`] : [`tenant:${a.tenant_id}:${m}`, `all:${m}`],
  );
}

/** A request-shaped view of the handshake for `resolveSession` (cookie or auth.token as Bearer). */
function handshakeRequest(req: IncomingMessage, token: unknown): Request {
  const headers: Record<string, string | undefined> = { cookie: req.headers.cookie };
  if (typeof token === 'string' && token) headers.authorization = `Bearer ${token}`;
  return { headers, query: {} } as unknown as Request;
}

export function attachAlertSocket(server: HttpServer, deps: AppDeps): { close(): void } {
  const io = new Server(server, {
    serveClient: false,
    cors: { origin: false },
    // A page of another site cannot open the channel with the visitor's cookie (cross-site WebSocket
    // hijacking): an Origin, when sent, must be this server's own (the terminal socket's rule).
    allowRequest: (req, callback) => {
      const ok = originAllowed(req, deps, deps.settings.SVC_INSTANCE_URL ?? '');
      callback(ok ? null : 'Origin not allowed', ok);
    },
  });
  // Engine.io answers (polling transport, handshake refusals) bypass Express: nosniff here too.
  const noSniff = (headers: Record<string, string>) => {
    headers['X-Content-Type-Options'] = 'nosniff';
  };
  io.engine.on('initial_headers', noSniff);
  io.engine.on('headers', noSniff);
  const nsp = io.of(ALERTS_NAMESPACE);
  const prefs = notificationPreferencesRepository(deps.database.sql);

  nsp.use((socket, next) => {
    void (async () => {
      const r = await resolveSession(deps, handshakeRequest(socket.request, socket.handshake.auth?.token));
      if (!r.ok) return next(new Error(r.error.message));
      if (r.mustChangePassword) return next(new Error('Password change required'));
      const { user, permissions } = r.auth;
      const min = (await prefs.get(user.id)).min_severity;
      const viewer = alertViewer(user, permissions, min);
      const rooms = [`user:${user.id}:${min}`];
      if (viewer.tenantWide.kind === 'all') rooms.push(`all:${min}`);
      if (viewer.tenantWide.kind === 'tenant') rooms.push(`tenant:${viewer.tenantWide.tenantId}:${min}`);
      socket.data.rooms = rooms;
      next();
    })().catch((err: Error) => next(err));
  });

  const bus = alertBusFor(deps);
  // The bus starts with the first socket (lazily, like every subscriber).
  let unsubscribe: (() => void) | undefined;
  nsp.on('connection', (socket) => {
    unsubscribe ??= bus.subscribe((a) => nsp.to(roomsFor(a)).emit('alert', a));
    void socket.join(socket.data.rooms as string[]);
    // Tells the client that alerts stored from now on reach it (the bus follows the table).
    void bus.ready().then(() => socket.emit('ready'));
  });

  return {
    close() {
      unsubscribe?.();
      nsp.disconnectSockets(true);
      io.engine.close();
    },
  };
}
