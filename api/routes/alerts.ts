// Alerts (spec document 2, "Alerts"; "Events" 1): the caller's alert list with filters (default page
// 50/0), the unread count, marking read, deleting, notification preferences, and the live stream as
// Server-Sent Events. Who sees what is decided in domain/alert-visibility.ts: own alerts, plus
// tenant-wide ones (user_id null) for administrators of their scope; the caller's `min_severity`
// preference hides alerts below it in the list, the count, read-all and the stream. An alert that is
// not visible answers 404, exactly like one that does not exist.
import type { Request, Response } from 'express';
import { Router } from 'express';
import { z } from 'zod';
import { alertsRepository, notificationPreferencesRepository } from '../../db/repositories/alerts.ts';
import { type AlertViewer, alertViewer, SEVERITIES } from '../../domain/alert-visibility.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { parseInput } from '../../domain/validation.ts';
import { type AlertEvent, alertBusFor } from '../../services/alerts/bus.ts';
import { openAlertFeed } from '../../services/alerts/stream.ts';
import { webhookPreferenceView } from '../../services/alerts/webhook-preference.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';
import { count, nullableInt } from '../openapi/shapes.ts';

export const DEFAULT_ALERT_PAGE_SIZE = 50;

const flag = z
  .enum(['true', 'false', '1', '0'])
  .default('false')
  .transform((v) => v === 'true' || v === '1');
const listQuery = z.object({
  type: z.string().min(1).max(50).optional(),
  severity: z.enum(SEVERITIES).optional(),
  unread_only: flag,
  limit: z.coerce.number().int().min(1).max(500).default(DEFAULT_ALERT_PAGE_SIZE),
  offset: z.coerce.number().int().min(0).default(0),
});
const alertIdParam = z.object({ alert_id: z.string().min(1).max(64) });
/** Unknown fields are refused (400), never ignored silently. */
const preferencesBody = z
  .object({
    email_enabled: z.boolean().optional(),
    push_enabled: z.boolean().optional(),
    min_severity: z.enum(SEVERITIES).optional(),
  })
  .strict();
const lastEventId = z.object({
  'Last-Event-ID': z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const alertAnswer = z.looseObject({
  id: count,
  alert_id: z.string(),
  alert_type: z.string().nullable(),
  severity: z.string(),
  title: z.string(),
  message: z.string().nullable(),
  user_id: nullableInt,
  tenant_id: nullableInt,
  read: z.boolean(),
  created_at: z.string(),
});
const preferencesAnswer = z.looseObject({
  email_enabled: z.boolean(),
  push_enabled: z.boolean(),
  min_severity: z.string(),
  webhook_url: z.string().nullable(),
  has_secret: z.boolean(),
});
const alertDone = z.looseObject({ success: z.literal(true), alert_id: z.string() });
const getAlerts = endpoint({
  tags: ['alerts'],
  query: listQuery,
  responses: {
    200: z.looseObject({ alerts: z.array(alertAnswer), total: count, limit: count, offset: count }),
  },
});
const getAlertsUnreadCount = endpoint({
  tags: ['alerts'],
  responses: { 200: z.looseObject({ unread_count: count }) },
});
const getAlertsPreferences = endpoint({ tags: ['alerts'], responses: { 200: preferencesAnswer } });
const putAlertsPreferences = endpoint({
  tags: ['alerts'],
  body: preferencesBody,
  responses: { 200: preferencesAnswer },
});
const postAlertsReadAll = endpoint({
  tags: ['alerts'],
  responses: { 200: z.looseObject({ success: z.literal(true), marked: count }) },
});
const getAlertsStream = endpoint({
  tags: ['alerts'],
  responses: { 200: 'Server-sent events (text/event-stream): one `alert` event per new alert' },
});
const postAlertsIdRead = endpoint({ tags: ['alerts'], params: alertIdParam, responses: { 200: alertDone } });
const deleteAlertsId = endpoint({ tags: ['alerts'], params: alertIdParam, responses: { 200: alertDone } });

export function alertsRouter(deps: AppDeps) {
  const r = Router();
  const alerts = alertsRepository(deps.database.sql);
  const prefs = notificationPreferencesRepository(deps.database.sql);
  // SSE comment keepalive (default 15 s, SVC_ALERT_KEEPALIVE_MS) keeps proxies from closing the stream.
  const keepaliveMs = deps.settings.SVC_ALERT_KEEPALIVE_MS;

  const viewerOf = async (req: Request): Promise<AlertViewer> => {
    const { user, permissions } = req.auth;
    return alertViewer(user, permissions, (await prefs.get(user.id)).min_severity);
  };

  r.use('/api/alerts', authenticate(deps));

  r.get('/api/alerts', getAlerts, async (req, res) => {
    const q = getAlerts.query(req);
    const { rows, total } = await alerts.list(await viewerOf(req), {
      type: q.type,
      severity: q.severity,
      unreadOnly: q.unread_only,
      limit: q.limit,
      offset: q.offset,
    });
    res.json({ alerts: rows, total, limit: q.limit, offset: q.offset });
  });

  r.get('/api/alerts/unread-count', getAlertsUnreadCount, async (req, res) => {
    res.json({ unread_count: await alerts.unreadCount(await viewerOf(req)) });
  });

  // The robot webhook is set through /api/alerts/preferences/webhook (api/routes/alert-webhook.ts);
  // it is shown here without its secret.
  const withWebhook = async (userId: number, p: object) => ({
    ...p,
    ...(await webhookPreferenceView(deps.database, userId)),
  });

  r.get('/api/alerts/preferences', getAlertsPreferences, async (req, res) => {
    res.json(await withWebhook(req.auth.user.id, await prefs.get(req.auth.user.id)));
  });

  r.put('/api/alerts/preferences', putAlertsPreferences, async (req, res) => {
    const body = putAlertsPreferences.body(req);
    const merged = { ...(await prefs.get(req.auth.user.id)), ...body };
    await prefs.put(req.auth.user.id, merged, deps.now());
    res.json(await withWebhook(req.auth.user.id, merged));
  });

  r.post('/api/alerts/read-all', postAlertsReadAll, async (req, res) => {
    res.json({ success: true, marked: await alerts.markAllRead(await viewerOf(req)) });
  });

  r.get('/api/alerts/stream', getAlertsStream, async (req, res) =>
    streamAlerts(deps, req, res, await viewerOf(req), keepaliveMs),
  );

  r.post('/api/alerts/:alert_id/read', postAlertsIdRead, async (req, res) => {
    const { alert_id } = postAlertsIdRead.params(req);
    if (!(await alerts.markRead(await viewerOf(req), alert_id))) throw new NotFoundError('Alert not found');
    res.json({ success: true, alert_id });
  });

  r.delete('/api/alerts/:alert_id', deleteAlertsId, async (req, res) => {
    const { alert_id } = deleteAlertsId.params(req);
    if (!(await alerts.remove(await viewerOf(req), alert_id))) throw new NotFoundError('Alert not found');
    res.json({ success: true, alert_id });
  });

  return r;
}

const frames = new WeakMap<AlertEvent, string>();
/**
 * One SSE frame per alert: `id:` the row id (for Last-Event-ID), `event: alert`, JSON data. The bus
 * hands every subscriber the same event object, so the frame is built once per alert, not per client.
 */
export function sseFrame(a: AlertEvent): string {
  let f = frames.get(a);
  if (f === undefined) {
    f = `id: ${a.id}\nevent: alert\ndata: ${JSON.stringify(a)}\n\n`;
    frames.set(a, f);
  }
  return f;
}

async function streamAlerts(
  deps: AppDeps,
  req: Request,
  res: Response,
  viewer: AlertViewer,
  keepaliveMs: number,
) {
  const header = req.headers['last-event-id'];
  const after =
    typeof header === 'string' && header !== ''
      ? parseInput(lastEventId, { 'Last-Event-ID': header })['Last-Event-ID']
      : undefined;
  // The stream opens once the bus follows the table: every alert stored after the client sees the
  // response headers (EventSource `open`) is delivered.
  // A client that leaves while the bus gets ready (a page left at once) must not start a keepalive
  // timer that no 'close' would ever clear (found by test/browser/layout.test.ts on PostgreSQL).
  let left = false;
  res.once('close', () => {
    left = true;
  });
  await alertBusFor(deps).ready();
  if (left || res.destroyed) return;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write('retry: 2000\n\n');
  const feed = openAlertFeed(deps, viewer, (a) => res.write(sseFrame(a)), after);
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), keepaliveMs);
  res.on('close', () => {
    clearInterval(keepalive);
    feed.close();
  });
  try {
    await feed.ready;
    // From here on every new visible alert is sent: tells a client (and the tests) the stream is live.
    res.write(': ready\n\n');
  } catch (err) {
    deps.logger.warn({ err }, 'alert stream start failed');
    res.end();
  }
}
