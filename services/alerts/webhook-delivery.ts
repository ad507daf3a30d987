// Robot webhook delivery of alerts (spec document 2, "Organization sync and alert webhooks" item 5,
// "Events" 3). Two halves:
//   - the trigger (`startAlertWebhookTrigger`, wired where the API listens): every alert on the alert
//     bus (services/alerts/bus.ts) is pushed to its recipients (alert-webhooks repository: the
//     alert's user, or a tenant-wide alert's admins; webhook URL set, push enabled, severity at or
//     above min_severity) by starting workflows/alerts/webhook.ts once per alert and user;
//   - the send (`sendAlertWebhook`, run by the activity): loads the alert and the user's webhook,
//     decrypts the secret, resolves it in the spec's order, signs the URL (domain/alerts/webhook-sign.ts)
//     and POSTs the text payload through the egress guard (services/egress/guard.ts: the policy is
//     checked on the literal host and on every address a name resolves to), with a timeout.
// Nothing here logs or returns the URL (it holds the robot's access token) or the secret.
import http from 'node:http';
import https from 'node:https';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Settings } from '../../config/settings.ts';
import type { DatabaseHandle } from '../../db/client.ts';
import { alertWebhooksRepository } from '../../db/repositories/alert-webhooks.ts';
import {
  resolveRobotSecret,
  robotAnswer,
  robotPayload,
  signedRobotUrl,
  splitRobotSecret,
} from '../../domain/alerts/webhook-sign.ts';
import { decryptSecret } from '../../domain/crypto/fernet.ts';
import {
  ALERT_WEBHOOK_WORKFLOW_TYPE,
  type AlertWebhookInput,
  alertWebhookWorkflowId,
} from '../../workflows/alerts/contract.ts';
import { EgressDeniedError, egressGuardFor } from '../egress/guard.ts';
import { storageKey } from '../secrets.ts';
import type { TemporalAccess } from '../temporal.ts';
import { type AlertEvent, alertBusFor } from './bus.ts';

/** How long one push may take (connect, send, answer). */
export const WEBHOOK_TIMEOUT_MS = 10_000;

type TriggerDeps = { database: DatabaseHandle; temporal: TemporalAccess; logger: Logger };

/**
 * Starts the push workflow for every recipient of `alert`; returns the recipients' user ids. Several
 * instances may call it for the same alert: the workflow id (REJECT_DUPLICATE) delivers once.
 */
export async function deliverAlertWebhooks(
  deps: TriggerDeps,
  alert: Pick<AlertEvent, 'id' | 'alert_id' | 'severity' | 'user_id' | 'tenant_id'>,
): Promise<number[]> {
  const recipients = await alertWebhooksRepository(deps.database.sql).recipients(alert);
  if (recipients.length === 0) return [];
  const client = await deps.temporal.client();
  for (const userId of recipients) {
    try {
      const input: AlertWebhookInput = { alertRowId: alert.id, userId };
      await client.workflow.start(ALERT_WEBHOOK_WORKFLOW_TYPE, {
        workflowId: alertWebhookWorkflowId(alert.alert_id, userId),
        taskQueue: deps.temporal.taskQueue,
        args: [input],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  return recipients;
}

/** Subscribes the webhook trigger to the alert bus; returns the unsubscribe. */
export function startAlertWebhookTrigger(deps: TriggerDeps): () => void {
  return alertBusFor(deps).subscribe((alert) => {
    deliverAlertWebhooks(deps, alert).catch((err: Error) =>
      deps.logger.warn(
        { alert_id: alert.alert_id, err: err.message },
        'alert webhook: could not start delivery',
      ),
    );
  });
}

export type SendOutcome =
  | { result: 'delivered'; status: number }
  | { result: 'skipped' | 'retry' | 'rejected'; detail: string };

type SendDeps = {
  database: Pick<DatabaseHandle, 'sql'>;
  settings: Pick<
    Settings,
    'egress' | 'alerts' | 'SVC_ENCRYPTION_KEY' | 'SECRET_KEY' | 'production' | 'dataDir'
  >;
  now: () => Date;
};

/** One push of alert row `alertRowId` to user `userId`, with the URL and secret read now. */
export async function sendAlertWebhook(
  deps: SendDeps,
  input: { alertRowId: number; userId: number },
): Promise<SendOutcome> {
  const repo = alertWebhooksRepository(deps.database.sql);
  const [alert, stored] = await Promise.all([repo.alert(input.alertRowId), repo.get(input.userId)]);
  if (!alert) return { result: 'skipped', detail: 'the alert no longer exists' };
  if (stored.webhookUrl === null) return { result: 'skipped', detail: 'the user has no webhook' };

  let userSecret: string | null = null;
  if (stored.secretCiphertext !== null) {
    try {
      userSecret = decryptSecret(stored.secretCiphertext, storageKey(deps.settings));
    } catch {
      return { result: 'rejected', detail: 'the stored webhook secret cannot be decrypted' };
    }
  }
  let legacySecret: string | null;
  try {
    legacySecret = splitRobotSecret(stored.webhookUrl).secret;
  } catch {
    return { result: 'rejected', detail: 'the stored webhook URL is not a URL' };
  }
  const secret = resolveRobotSecret({
    userSecret,
    globalSecret: deps.settings.alerts.chatplat_a_webhook_secret,
    legacySecret,
  });
  const url = signedRobotUrl(stored.webhookUrl, secret, deps.now().getTime());
  let status: number;
  try {
    status = await postJson(deps.settings, url, robotPayload(alert));
  } catch (err) {
    if (err instanceof EgressDeniedError) return { result: 'rejected', detail: err.message };
    return { result: 'retry', detail: `robot webhook not reached: ${(err as Error).message}` };
  }
  const answer = robotAnswer(status);
  if (answer === 'delivered') return { result: 'delivered', status };
  return { result: answer, detail: `robot webhook answered ${status}` };
}

/** POSTs JSON through the egress guard's agents; resolves with the status code. */
function postJson(settings: Pick<Settings, 'egress'>, target: string, body: unknown): Promise<number> {
  const guard = egressGuardFor(settings);
  const url = new URL(target);
  const refusal = guard.refusal(url.hostname);
  if (refusal !== null) return Promise.reject(new EgressDeniedError(refusal));
  const data = Buffer.from(JSON.stringify(body), 'utf8');
  const secure = url.protocol === 'https:';
  return new Promise<number>((resolve, reject) => {
    const req = (secure ? https : http).request(
      url,
      {
        method: 'POST',
        agent: secure ? guard.agents['https:'] : guard.agents['http:'],
        headers: { 'content-type': 'application/json', 'content-length': data.length },
        timeout: WEBHOOK_TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${WEBHOOK_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(data);
  });
}
