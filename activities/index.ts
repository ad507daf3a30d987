import { createAlertWebhookActivities } from './alerts/webhook.ts';
import { createAutonomousAcceptanceActivities } from './autonomous/acceptance.ts';
import { createAutonomousMergeStageActivities } from './autonomous/merge-stage.ts';
import { createAutonomousOrchestrationActivities } from './autonomous/orchestration.ts';
import { createAutonomousRunnerActivities } from './autonomous/run-cli.ts';
import { createAutonomousSchedulingActivities } from './autonomous/scheduling.ts';
import type { ActivityDeps } from './deps.ts';
import { createMaintenanceActivities } from './maintenance.ts';
import { createOrgSyncActivities } from './orgsync/sync.ts';
import { createProbeActivities } from './probe.ts';
import { createRemoteSessionActivities } from './remote-session.ts';
import { createCollectActivities } from './usage/collect.ts';
import { createQuotaEnforcementActivities } from './usage/quota-enforcement.ts';
import { createSummaryRefreshActivities } from './usage/summary-refresh.ts';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createProbeActivities(),
    ...createAlertWebhookActivities(deps),
    ...createRemoteSessionActivities(deps),
    ...createMaintenanceActivities(deps),
    ...createOrgSyncActivities(deps),
    ...createCollectActivities(deps),
    ...createQuotaEnforcementActivities(deps),
    ...createSummaryRefreshActivities(deps),
    ...createAutonomousRunnerActivities(deps),
    ...createAutonomousOrchestrationActivities(deps),
    ...createAutonomousMergeStageActivities(deps),
    ...createAutonomousAcceptanceActivities(deps),
    ...createAutonomousSchedulingActivities(deps),
  };
}
