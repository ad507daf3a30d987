// What one quota enforcement tick did (services/quota-enforcement.ts); the workflow returns it.
export interface QuotaEnforcementSummary {
  day: string;
  alertsRaised: number;
  usersOverQuota: number[];
  tenantsOverQuota: number[];
  sessionsStopped: string[];
  /** Workspace sessions terminated (step 4). */
  workspaceSessionsTerminated: string[];
  /** Autonomous workflows signalled to pause by quota (step 5). */
  autonomousPaused: string[];
}
