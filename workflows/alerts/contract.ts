// The contract between whoever starts an alert webhook push (services/alerts/webhook-delivery.ts) and
// the workflow (workflows/alerts/webhook.ts): its type name, id and input. The starter imports these,
// never the workflow file.

/** The workflow type name the API starts. */
export const ALERT_WEBHOOK_WORKFLOW_TYPE = 'alertWebhookWorkflow';

export const ALERT_WEBHOOK_ID_PREFIX = 'alert-webhook-';

export const alertWebhookWorkflowId = (alertId: string, userId: number) =>
  `${ALERT_WEBHOOK_ID_PREFIX}${alertId}-${userId}`;

export interface AlertWebhookInput {
  /** alerts.id (the row id). */
  alertRowId: number;
  userId: number;
}
