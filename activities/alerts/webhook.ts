// The activity of workflows/alerts/webhook.ts: one signed robot push (services/alerts/webhook-delivery.ts
// does the work). A retryable answer (429, 5xx) or a network error throws so Temporal retries with
// backoff; a final refusal (other 4xx, egress refusal, undecryptable secret) throws a non-retryable
// RobotWebhookRejected. Failure messages name the status only, never the URL or the secret.
import { ApplicationFailure } from '@temporalio/activity';
import { sendAlertWebhook } from '../../services/alerts/webhook-delivery.ts';
import type { ActivityDeps } from '../deps.ts';

export interface AlertWebhookResult {
  result: 'delivered' | 'skipped';
  /** The HTTP status of a delivered push; null when skipped. */
  status: number | null;
  /** Why a push was skipped (alert deleted, webhook removed). */
  reason?: string;
}

export function createAlertWebhookActivities(deps: Pick<ActivityDeps, 'database' | 'settings' | 'now'>) {
  return {
    async sendAlertWebhook(input: { alertRowId: number; userId: number }): Promise<AlertWebhookResult> {
      const outcome = await sendAlertWebhook(deps, input);
      switch (outcome.result) {
        case 'delivered':
          return { result: 'delivered', status: outcome.status };
        case 'skipped':
          return { result: 'skipped', status: null, reason: outcome.detail };
        case 'retry':
          throw ApplicationFailure.retryable(outcome.detail, 'RobotWebhookRetry');
        case 'rejected':
          throw ApplicationFailure.nonRetryable(outcome.detail, 'RobotWebhookRejected');
      }
    },
  };
}

export type AlertWebhookActivities = ReturnType<typeof createAlertWebhookActivities>;
