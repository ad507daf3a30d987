// Every router of the API, mounted in one place so a route's handler is one step from its path.
import type { Express } from 'express';
import type { AppDeps } from '../../services/deps.ts';
import { adminQuotaRouter } from './admin-quota.ts';
import { adminUsersRouter } from './admin-users.ts';
import { alertWebhookRouter } from './alert-webhook.ts';
import { alertsRouter } from './alerts.ts';
import { analysisRouter } from './analytics/analysis.ts';
import { analyticsRouter } from './analytics/analytics.ts';
import { forecastRouter } from './analytics/forecast.ts';
import { apiKeysRouter } from './api-keys.ts';
import { auditLogsRouter } from './audit-logs.ts';
import { authRouter } from './auth.ts';
import { mountAutonomousRoutes } from './autonomous/index.ts';
import { complianceRouter } from './compliance.ts';
import { contentFilterRouter } from './content-filter.ts';
import { gatewayKeysRouter } from './gateway-keys.ts';
import { openApiRouter } from './openapi.ts';
import { opsRouter } from './ops.ts';
import { optimizationRouter } from './optimization.ts';
import { orgSyncRouter } from './orgsync.ts';
import { otlpRouter } from './otlp.ts';
import { promptsRouter } from './prompts.ts';
import { quotaRouter } from './quota.ts';
import { agentRouter } from './remote/agent.ts';
import { apiKeyVaultRouter } from './remote/api-keys.ts';
import { mountRemoteRoutes } from './remote/index.ts';
import { mountLlmProxy } from './remote/llm-proxy.ts';
import { terminalAgentRouter } from './remote/terminal-agent.ts';
import { usageReportRouter } from './remote/usage-report.ts';
import { roiRouter } from './roi.ts';
import { securitySettingsRouter } from './security-settings.ts';
import { ssoRouter } from './sso/index.ts';
import { tenantAutonomousRouter } from './tenant-autonomous.ts';
import { tenantsRouter } from './tenants.ts';
import { uploadRouter } from './upload.ts';
import { uploadStreamRouter } from './upload-stream.ts';
import { uploadTokensRouter } from './upload-tokens.ts';
import { fetchRouter } from './usage/fetch.ts';
import { messagesRouter } from './usage/messages.ts';
import { myUsageRouter } from './usage/my-usage.ts';
import { usageReportPageRouter } from './usage/report.ts';
import { requestStatsRouter } from './usage/request-stats.ts';
import { summaryRefreshRouter } from './usage/summary-refresh.ts';
import { usageRouter } from './usage/usage.ts';
import { workspaceSessionsRouter } from './workspace-sessions.ts';

/** Routes that read the raw request stream (the model proxy, streamed uploads); before the JSON parser. */
export function mountStreamingRoutes(app: Express, deps: AppDeps) {
  mountLlmProxy(app, deps);
  app.use(uploadStreamRouter(deps));
  app.use(otlpRouter(deps));
}

export function mountRoutes(app: Express, deps: AppDeps) {
  // First: every agent's long poll, heartbeat and output batch comes here (1,000 idle agents: about
  // 50 requests a second). Express tries each route of every router mounted before a request's own,
  // which cost about 0.4 ms of CPU per agent request when this router came after the others
  // (bench/remote --agents 1000). Its paths are all /api/remote/agent/..., which no other router has.
  app.use(agentRouter(deps));
  app.use(opsRouter(deps));
  app.use(openApiRouter(deps));
  app.use(authRouter(deps));
  app.use(ssoRouter(deps));
  app.use('/api/admin/users', adminUsersRouter(deps));
  app.use(orgSyncRouter(deps));
  app.use(tenantAutonomousRouter(deps)); // before the tenants router: its own guards, same rules
  app.use('/api/tenants', tenantsRouter(deps));
  app.use('/api/api-keys', apiKeysRouter(deps));
  app.use('/api/security-settings', securitySettingsRouter(deps));
  app.use(auditLogsRouter(deps));
  app.use(complianceRouter(deps));
  app.use(quotaRouter(deps));
  app.use(contentFilterRouter(deps));
  app.use(alertWebhookRouter(deps));
  app.use(alertsRouter(deps));
  app.use(adminQuotaRouter(deps));
  app.use(summaryRefreshRouter(deps));
  app.use(apiKeyVaultRouter(deps));
  app.use(usageReportRouter(deps));
  app.use(uploadRouter(deps));
  app.use(uploadTokensRouter(deps));
  app.use(gatewayKeysRouter(deps));
  app.use(fetchRouter(deps));
  app.use(analysisRouter(deps));
  app.use(analyticsRouter(deps));
  app.use(forecastRouter(deps));
  app.use(roiRouter(deps));
  app.use(optimizationRouter(deps));
  app.use(usageRouter(deps));
  app.use(messagesRouter(deps));
  app.use(requestStatsRouter(deps));
  app.use(myUsageRouter(deps));
  app.use(usageReportPageRouter(deps));
  app.use(promptsRouter(deps));
  app.use(workspaceSessionsRouter(deps));
  mountRemoteRoutes(app, deps);
  // The agent's terminal channel (the browser side is a WebSocket: api/terminal-socket.ts).
  app.use(terminalAgentRouter(deps));
  mountAutonomousRoutes(app, deps);
}
