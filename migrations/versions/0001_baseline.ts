import type { RawSql } from '../../db/client.ts';
import {
  agentSessions,
  alerts,
  anomalyStatus,
  auditLogs,
  contentFilterRules,
  dailyMessages,
  dailyStats,
  dailyUsage,
  hourlyStats,
  insightsReports,
  loginAttempts,
  notificationPreferences,
  projects,
  promptTemplates,
  quotaAlerts,
  quotaUsage,
  rolePermissions,
  securitySettings,
  sessionMessages,
  sessions,
  ssoIdentities,
  ssoProviders,
  ssoSessions,
  tenantQuotas,
  tenantSettings,
  tenants,
  tenantUsage,
  usageSummary,
  userDailyStats,
  userPermissions,
  userProjects,
  users,
  userToolAccounts,
  webUserAuthSessions,
} from '../../db/schema/index.ts';
import { ROLE_TEMPLATES } from '../../domain/permissions.ts';
import { DEFAULT_SECURITY_SETTINGS } from '../../domain/security-settings.ts';
import { defineMigration } from '../migration.ts';

const SESSION_STATS_SELECT = `
  SELECT agent_session_id,
         COUNT(*) AS message_count,
         COALESCE(SUM(tokens_used), 0) AS total_tokens,
         COALESCE(SUM(input_tokens), 0) AS total_input_tokens,
         COALESCE(SUM(output_tokens), 0) AS total_output_tokens,
         MIN(timestamp) AS first_message_at,
         MAX(timestamp) AS last_message_at
    FROM daily_messages
   WHERE agent_session_id IS NOT NULL
   GROUP BY agent_session_id`;

async function seed(sql: RawSql) {
  // The default tenant (id 1) that `tenant_id DEFAULT 1` columns point at.
  await sql.query(
    `INSERT INTO tenants (name, slug, status, plan) SELECT 'Default', 'default', 'active', 'standard'
      WHERE NOT EXISTS (SELECT 1 FROM tenants)`,
  );
  await sql.query(`INSERT INTO tenant_settings (tenant_id) SELECT id FROM tenants WHERE slug = 'default'
                    AND NOT EXISTS (SELECT 1 FROM tenant_settings s WHERE s.tenant_id = tenants.id)`);
  await sql.query(`INSERT INTO tenant_quotas (tenant_id) SELECT id FROM tenants WHERE slug = 'default'
                    AND NOT EXISTS (SELECT 1 FROM tenant_quotas q WHERE q.tenant_id = tenants.id)`);
  for (const [role, perms] of Object.entries(ROLE_TEMPLATES))
    for (const p of perms)
      await sql.query(
        `INSERT INTO role_permissions (role, permission) VALUES (?, ?) ON CONFLICT DO NOTHING`,
        [role, p],
      );
  for (const s of DEFAULT_SECURITY_SETTINGS)
    await sql.query(
      `INSERT INTO security_settings (setting_key, setting_value, description) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
      [s.key, String(s.value), s.description],
    );
}

export default defineMigration({
  id: '0001_baseline',
  description:
    'baseline: users, auth, tenants, usage, messages, governance, SSO, workspace; session_stats view',
  kind: 'expand',
  // Named explicitly so the baseline never grows with the schema (it did while it was "every table no
  // later migration claims"); new tables belong to new migrations.
  creates: [
    agentSessions,
    alerts,
    anomalyStatus,
    auditLogs,
    contentFilterRules,
    dailyMessages,
    dailyStats,
    dailyUsage,
    hourlyStats,
    insightsReports,
    loginAttempts,
    notificationPreferences,
    projects,
    promptTemplates,
    quotaAlerts,
    quotaUsage,
    rolePermissions,
    securitySettings,
    sessionMessages,
    sessions,
    ssoIdentities,
    ssoProviders,
    ssoSessions,
    tenantQuotas,
    tenantSettings,
    tenantUsage,
    tenants,
    usageSummary,
    userDailyStats,
    userPermissions,
    userProjects,
    userToolAccounts,
    users,
    webUserAuthSessions,
  ],
  async up(sql) {
    if (sql.dialect === 'postgres') {
      await sql.exec(`CREATE MATERIALIZED VIEW IF NOT EXISTS session_stats AS ${SESSION_STATS_SELECT}`);
      await sql.exec(
        `CREATE UNIQUE INDEX IF NOT EXISTS session_stats_session ON session_stats (agent_session_id)`,
      );
    } else {
      // SQLite has no materialized views; a plain view is always fresh, which is the same contract.
      await sql.exec(`CREATE VIEW IF NOT EXISTS session_stats AS ${SESSION_STATS_SELECT}`);
    }
  },
  // Seeds run each time the baseline is applied, from today's role templates and security defaults.
  data: seed,
  async down(sql) {
    await sql.exec(
      sql.dialect === 'postgres'
        ? 'DROP MATERIALIZED VIEW IF EXISTS session_stats'
        : 'DROP VIEW IF EXISTS session_stats',
    );
  },
});
