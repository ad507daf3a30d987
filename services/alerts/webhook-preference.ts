// A user's robot webhook preference (spec document 2, "Organization sync and alert webhooks" item 5):
// the URL is checked against the one egress policy (domain/egress/address-policy.ts: https only, no
// loopback, private, link-local/metadata or local-name hosts unless `egress.allow_hosts` names them;
// an allow-listed host may also use http), `svc_robot_secret` is taken out of it and stored only as
// Fernet ciphertext (the storage key of services/secrets.ts), and the view handed back never holds
// the secret, only `has_secret`. Addresses a name resolves to are checked again at every send
// (services/egress/guard.ts), which is the check that counts.
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import { alertWebhooksRepository } from '../../db/repositories/alert-webhooks.ts';
import { splitRobotSecret } from '../../domain/alerts/webhook-sign.ts';
import { encryptSecret } from '../../domain/crypto/fernet.ts';
import {
  allowListOf,
  hostRefusal,
  isAllowListed,
  normalizeHost,
} from '../../domain/egress/address-policy.ts';
import { BadRequestError } from '../../domain/errors.ts';
import { storageKey } from '../secrets.ts';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export interface WebhookPreferenceView {
  webhook_url: string | null;
  has_secret: boolean;
}

/**
 * Validates a robot webhook URL and splits off its `svc_robot_secret`. Throws BadRequestError naming
 * `webhook_url` (the message never repeats the URL, which may hold the secret).
 */
export function normaliseWebhookUrl(
  raw: string,
  egress: { allow_hosts: readonly string[] } = { allow_hosts: [] },
): { url: string; secret: string | null } {
  const bad = (why: string): never => {
    throw new BadRequestError(`webhook_url ${why}`);
  };
  const trimmed = raw.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_WEBHOOK_URL_LENGTH)
    bad(`must be a URL of 1 to ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return bad('must be an https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') bad('must be an https URL');
  if (url.username || url.password) bad('must not contain credentials');
  if (url.hash) bad('must not contain a fragment');
  const host = normalizeHost(url.hostname);
  if (!isAllowListed(host, allowListOf(egress.allow_hosts))) {
    if (url.protocol !== 'https:') bad('must be an https URL');
    const refusal = hostRefusal(host);
    if (refusal !== null)
      bad(
        `host ${host} is a ${refusal.replace('_', '-')} target, which alert webhooks may not reach (ask a system administrator to add it to egress.allow_hosts)`,
      );
  }
  return splitRobotSecret(url.href);
}

type PreferenceDeps = {
  database: Pick<DatabaseHandle, 'sql'>;
  settings: Pick<Settings, 'egress' | 'SVC_ENCRYPTION_KEY' | 'SECRET_KEY' | 'production' | 'dataDir'>;
  now?: () => Date;
};

/** A legacy row may still carry `svc_robot_secret` in its URL: the view shows the URL without it. */
function viewOf(w: { webhookUrl: string | null; secretCiphertext: string | null }): WebhookPreferenceView {
  if (w.webhookUrl === null) return { webhook_url: null, has_secret: w.secretCiphertext !== null };
  let split: { url: string | null; secret: string | null };
  try {
    split = splitRobotSecret(w.webhookUrl);
  } catch {
    split = { url: null, secret: null };
  }
  return { webhook_url: split.url, has_secret: w.secretCiphertext !== null || split.secret !== null };
}

/** Saves (raw = null: removes) the user's robot webhook; returns the view (never the secret). */
export async function saveWebhookPreference(
  deps: PreferenceDeps,
  userId: number,
  raw: string | null,
): Promise<WebhookPreferenceView> {
  const stored =
    raw === null
      ? { webhookUrl: null, secretCiphertext: null }
      : (() => {
          const { url, secret } = normaliseWebhookUrl(raw, deps.settings.egress);
          return {
            webhookUrl: url,
            secretCiphertext: secret === null ? null : encryptSecret(secret, storageKey(deps.settings)),
          };
        })();
  await alertWebhooksRepository(deps.database.sql).put(userId, stored, deps.now?.() ?? new Date());
  return viewOf(stored);
}

/** The user's webhook as shown to them (GET /api/alerts/preferences includes these two fields). */
export async function webhookPreferenceView(
  database: Pick<DatabaseHandle, 'sql'>,
  userId: number,
): Promise<WebhookPreferenceView> {
  return viewOf(await alertWebhooksRepository(database.sql).get(userId));
}
