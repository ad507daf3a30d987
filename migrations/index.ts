// The ordered migration history. Add a file under versions/, list it here, then freeze it with
// `npm run migrate -- freeze <revision>` (writes migrations/sql); never edit a released one.
import type { Migration } from './migration.ts';
import baseline from './versions/0001_baseline.ts';
import remoteWorkspace from './versions/0002_remote_workspace.ts';
import remoteRuntime from './versions/0003_remote_runtime.ts';
import proxyTokens from './versions/0004_proxy_tokens.ts';
import autonomous from './versions/0005_autonomous_workflows.ts';
import remoteOutputDedupe from './versions/0007_remote_output_dedupe.ts';
import apiKeyOrigin from './versions/0008_api_key_origin.ts';
import remoteMachineKey from './versions/0010_remote_machine_key.ts';
import usageEstimatedTokens from './versions/0011_usage_estimated_tokens.ts';
import usageUploads from './versions/0012_usage_uploads.ts';
import usageReadModel from './versions/0013_usage_read_model.ts';
import usageReadIndexes from './versions/0014_usage_read_indexes.ts';
import contentFilter from './versions/0015_content_filter.ts';
import complianceReports from './versions/0018_compliance_reports.ts';
import workspaceProjects from './versions/0020_workspace_projects.ts';
import ssoLoginState from './versions/0021_sso_login_state.ts';
import orgTeams from './versions/0022_org_teams.ts';
import autonomousEngine from './versions/0023_autonomous_engine.ts';
import localForge from './versions/0024_local_forge.ts';
import tenantUserCountBackfill from './versions/0026_tenant_user_count_backfill.ts';
import sessionProviderError from './versions/0028_session_provider_error.ts';
import milestoneStepKey from './versions/0029_milestone_step_key.ts';
import terminalRelays from './versions/0030_terminal_relays.ts';
import forgeProtection from './versions/0032_forge_protection.ts';
import milestoneOutcome from './versions/0033_milestone_outcome.ts';
import tenantAutonomous from './versions/0034_tenant_autonomous.ts';
import uploadTokens from './versions/0035_upload_tokens.ts';
import autonomousActivityEvents from './versions/0036_autonomous_activity_events.ts';
import sessionCliStarted from './versions/0040_session_cli_started.ts';
import alertReads from './versions/0041_alert_reads.ts';
import gatewayKeys from './versions/0042_gateway_keys.ts';
import otelProductivity from './versions/0043_otel_productivity.ts';
import { minCompatible } from './window.ts';

export const MIGRATIONS: Migration[] = [
  baseline,
  remoteWorkspace,
  remoteRuntime,
  proxyTokens,
  autonomous,
  remoteOutputDedupe,
  apiKeyOrigin,
  remoteMachineKey,
  usageEstimatedTokens,
  usageUploads,
  usageReadModel,
  usageReadIndexes,
  contentFilter,
  complianceReports,
  workspaceProjects,
  ssoLoginState,
  orgTeams,
  autonomousEngine,
  localForge,
  tenantUserCountBackfill,
  sessionProviderError,
  milestoneStepKey,
  terminalRelays,
  forgeProtection,
  milestoneOutcome,
  tenantAutonomous,
  uploadTokens,
  autonomousActivityEvents,
  sessionCliStarted,
  alertReads,
  gatewayKeys,
  otelProductivity,
];
export const HEAD = MIGRATIONS[MIGRATIONS.length - 1]!.id;
/**
 * The oldest application revision (build head) that can serve a database at HEAD, derived from the
 * migrations' kinds (window.ts): expand keeps it, contract moves it to the revision before. The runner
 * records it with each revision, so older builds accept a database that is only expanded past them.
 */
export const MIN_COMPATIBLE = minCompatible(MIGRATIONS);
