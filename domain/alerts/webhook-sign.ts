// Robot webhook signing for alert pushes (spec document 2, "Organization sync and alert webhooks" item
// 5, "Authentication" 5, "Events" 3), pure: where the signing secret comes from, how the saved URL
// becomes the URL that is called, the text payload, and which answers are retried.
//
// The common robot-webhook scheme: `timestamp` = milliseconds since the epoch, `sign` = base64 of
// HMAC-SHA256 with key = secret over `timestamp + "\n" + secret`, URL-encoded as a query parameter. The
// secret itself never travels: `svc_robot_secret` is removed from the URL before it is called.
import { createHmac } from 'node:crypto';

/** The query parameter a user may put in the robot URL to hand over the signing secret. */
export const ROBOT_SECRET_PARAM = 'svc_robot_secret';

/** The URL without `svc_robot_secret`, and the parameter's value (null when absent or empty). */
export function splitRobotSecret(raw: string): { url: string; secret: string | null } {
  const url = new URL(raw);
  const secret = url.searchParams.get(ROBOT_SECRET_PARAM);
  url.searchParams.delete(ROBOT_SECRET_PARAM);
  return { url: url.href, secret: secret === null || secret === '' ? null : secret };
}

/**
 * The secret that signs a push, in the spec's order: (1) the user's own secret (stored encrypted),
 * (2) the global `alerts.chatplat_a_webhook_secret`, (3) a legacy `svc_robot_secret` still inside the
 * saved URL. Null: the push goes unsigned.
 */
export function resolveRobotSecret(sources: {
  userSecret: string | null;
  globalSecret: string | null | undefined;
  legacySecret: string | null;
}): string | null {
  for (const s of [sources.userSecret, sources.globalSecret, sources.legacySecret])
    if (s != null && s !== '') return s;
  return null;
}

/** base64(HMAC-SHA256(key = secret, timestamp + "\n" + secret)), not yet URL-encoded. */
export function robotSignature(secret: string, timestampMs: number): string {
  return createHmac('sha256', secret).update(`${timestampMs}\n${secret}`, 'utf8').digest('base64');
}

/**
 * The URL to call: the saved URL without `svc_robot_secret`, plus `timestamp` and `sign` when there is
 * a secret (URLSearchParams percent-encodes the base64: `+` `/` `=` become %2B %2F %3D).
 */
export function signedRobotUrl(savedUrl: string, secret: string | null, timestampMs: number): string {
  const url = new URL(splitRobotSecret(savedUrl).url);
  url.searchParams.delete('timestamp');
  url.searchParams.delete('sign');
  if (secret !== null) {
    url.searchParams.set('timestamp', String(timestampMs));
    url.searchParams.set('sign', robotSignature(secret, timestampMs));
  }
  return url.href;
}

export interface RobotTextPayload {
  msgtype: 'text';
  text: { content: string };
}

/** The text payload: `<severity> <title>: <message>` (without `: ` when there is no message). */
export function robotPayload(alert: {
  severity: string;
  title: string;
  message: string | null;
}): RobotTextPayload {
  const head = `${alert.severity} ${alert.title}`;
  return { msgtype: 'text', text: { content: alert.message ? `${head}: ${alert.message}` : head } };
}

/** What an HTTP answer means: 2xx delivered; 429 and 5xx (and 1xx/3xx) retried; other 4xx final. */
export function robotAnswer(status: number): 'delivered' | 'retry' | 'rejected' {
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 400 && status < 500 && status !== 429) return 'rejected';
  return 'retry';
}
