// One robot webhook push of one alert to one user (spec document 2, "Organization sync and alert
// webhooks" item 5). The workflow id `alert-webhook-<alert_id>-<user_id>` (started with
// REJECT_DUPLICATE) makes every API instance that sees the alert start the same workflow, so the push
// is delivered once. The input and the history hold ids only: the activity loads the URL and decrypts
// the secret at send time. Retries: 5 attempts with exponential backoff (1 s, 2 s, 4 s, 8 s); a 4xx
// answer other than 429 is final (RobotWebhookRejected).
import { proxyActivities } from '@temporalio/workflow';
import type { AlertWebhookActivities, AlertWebhookResult } from '../../activities/alerts/webhook.ts';
import type { AlertWebhookInput } from './contract.ts';

const acts = proxyActivities<AlertWebhookActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    maximumAttempts: 5,
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    nonRetryableErrorTypes: ['RobotWebhookRejected'],
  },
});

export async function alertWebhookWorkflow(input: AlertWebhookInput): Promise<AlertWebhookResult> {
  return acts.sendAlertWebhook({ alertRowId: input.alertRowId, userId: input.userId });
}
