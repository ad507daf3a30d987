import { sql } from 'drizzle-orm';
import { index, integer, pgTable, real, uniqueIndex } from 'drizzle-orm/pg-core';
import { bool, createdAt, day, id, int, str, ts, txt, updatedAt } from './columns.ts';

export const contentFilterRules = pgTable('content_filter_rules', {
  id: id(),
  pattern: txt('pattern').notNull(),
  type: str('type', 20).notNull().default('keyword'),
  severity: str('severity', 20).notNull().default('medium'),
  action: str('action', 20).notNull().default('warn'),
  description: txt('description'),
  isEnabled: bool('is_enabled', true),
  tenantId: int('tenant_id'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/**
 * Added by 0015_content_filter: one row (id 1) whose version is bumped by every write to
 * content_filter_rules, so each API instance notices a rule change and drops its compiled rules
 * (services/content-filter.ts).
 */
export const contentFilterVersion = pgTable('content_filter_version', {
  id: integer('id').primaryKey(),
  version: integer('version').notNull().default(0),
});

export const anomalyStatus = pgTable('anomaly_status', {
  id: id(),
  anomalyType: str('anomaly_type', 50),
  affectedUsersHash: str('affected_users_hash', 128),
  status: str('status', 20),
  processedBy: int('processed_by'),
  processedAt: ts('processed_at'),
  createdAt: createdAt(),
});

export const insightsReports = pgTable('insights_reports', {
  id: id(),
  userId: int('user_id'),
  startDate: day('start_date'),
  endDate: day('end_date'),
  overallScore: real('overall_score'),
  overallAssessment: txt('overall_assessment'),
  strengths: txt('strengths'),
  areasForImprovement: txt('areas_for_improvement'),
  suggestions: txt('suggestions'),
  usageSummary: txt('usage_summary'),
  model: str('model', 100),
  rawResponse: txt('raw_response'),
  createdAt: createdAt(),
});

export const projects = pgTable(
  'projects',
  {
    id: id(),
    tenantId: int('tenant_id').notNull().default(1),
    path: str('path', 500).notNull(),
    name: str('name', 200),
    description: txt('description'),
    createdBy: int('created_by'),
    isActive: bool('is_active', true),
    isShared: bool('is_shared', false),
    createdAt: createdAt(),
  },
  (t) => [
    // 0020_workspace_projects: a path is unique per tenant among active projects.
    uniqueIndex('projects_tenant_path_active').on(t.tenantId, t.path).where(sql`is_active`),
  ],
);

export const userProjects = pgTable(
  'user_projects',
  {
    id: id(),
    userId: int('user_id').notNull(),
    projectId: int('project_id').notNull(),
    totalSessions: int('total_sessions').notNull().default(0),
    totalTokens: int('total_tokens').notNull().default(0),
    totalRequests: int('total_requests').notNull().default(0),
  },
  (t) => [uniqueIndex('user_projects_key').on(t.userId, t.projectId)],
);

export const promptTemplates = pgTable(
  'prompt_templates',
  {
    id: id(),
    name: str('name', 200).notNull(),
    description: txt('description'),
    category: str('category', 50).notNull().default('general'),
    content: txt('content').notNull(),
    variables: txt('variables'),
    tags: txt('tags'),
    authorId: int('author_id'),
    tenantId: int('tenant_id'),
    isPublic: bool('is_public', false),
    isFeatured: bool('is_featured', false),
    useCount: int('use_count').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('prompt_templates_tenant').on(t.tenantId)],
);

export const ssoProviders = pgTable('sso_providers', {
  id: id(),
  name: str('name', 100).notNull().unique(),
  providerType: str('provider_type', 10).notNull(),
  /** JSON text; the client secret inside is ciphertext. */
  config: txt('config').notNull(),
  tenantId: int('tenant_id'),
  isActive: bool('is_active', true),
  createdAt: createdAt(),
});

export const ssoIdentities = pgTable(
  'sso_identities',
  {
    id: id(),
    userId: int('user_id').notNull(),
    providerName: str('provider_name', 100).notNull(),
    providerUserId: str('provider_user_id', 255).notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('sso_identities_key').on(t.providerName, t.providerUserId)],
);

export const ssoSessions = pgTable('sso_sessions', {
  id: id(),
  sessionToken: str('session_token', 128).notNull().unique(),
  userId: int('user_id').notNull(),
  providerName: str('provider_name', 100).notNull(),
  accessToken: txt('access_token'),
  refreshToken: txt('refresh_token'),
  expiresAt: ts('expires_at'),
});

/**
 * Added by 0021_sso_login_state: one row per started SSO login (OIDC/OAuth2 state, SAML RelayState),
 * found by the SHA-256 hex of the opaque value the browser carries (the raw value is never stored).
 * Single use (consumed_at), 10 minutes (expires_at); the PKCE verifier is Fernet ciphertext.
 */
export const ssoLoginStates = pgTable('sso_login_states', {
  id: id(),
  stateHash: str('state_hash', 64).notNull().unique(),
  providerName: str('provider_name', 100).notNull(),
  /** `oidc` | `oauth2` | `saml` */
  kind: str('kind', 10).notNull(),
  nonce: txt('nonce'),
  codeVerifier: txt('code_verifier'),
  samlRequestId: str('saml_request_id', 255),
  returnTo: str('return_to', 500),
  createdAt: createdAt(),
  expiresAt: ts('expires_at').notNull(),
  consumedAt: ts('consumed_at'),
});

/** Added by 0021_sso_login_state: SAML assertion ids already accepted, kept until they expire (replay). */
export const ssoConsumedAssertions = pgTable(
  'sso_consumed_assertions',
  {
    id: id(),
    providerName: str('provider_name', 100).notNull(),
    assertionId: str('assertion_id', 255).notNull(),
    expiresAt: ts('expires_at').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('sso_consumed_assertions_key').on(t.providerName, t.assertionId)],
);
