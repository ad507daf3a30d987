import { index, integer, pgTable, uniqueIndex } from 'drizzle-orm/pg-core';
import { bool, createdAt, id, int, str, ts, txt, updatedAt } from './columns.ts';

// Tables introduced by 0002_remote_workspace.

export const remoteMachines = pgTable(
  'remote_machines',
  {
    id: id(),
    machineId: str('machine_id', 64).notNull().unique(),
    machineName: str('machine_name', 255).notNull(),
    hostname: str('hostname', 255),
    osType: str('os_type', 50),
    osVersion: str('os_version', 100),
    ipAddress: str('ip_address', 64),
    status: str('status', 10).notNull().default('offline'),
    /** JSON text */
    capabilities: txt('capabilities'),
    agentVersion: str('agent_version', 50),
    cliPath: str('cli_path', 500),
    workDir: str('work_dir', 500),
    tenantId: int('tenant_id'),
    createdBy: int('created_by'),
    /** SHA-256 of the agent token issued at registration. */
    agentTokenHash: str('agent_token_hash', 128),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    lastHeartbeat: ts('last_heartbeat'),
    // Added by 0010_remote_machine_key: random per registration generation. A machine deleted and
    // registered again under the same agent-chosen machine_id gets a new key, and its sessions and
    // commands carry the key they were created under, so they are never inherited by the newcomer.
    machineKey: str('machine_key', 64),
  },
  (t) => [index('remote_machines_tenant').on(t.tenantId)],
);

export const machineAssignments = pgTable(
  'machine_assignments',
  {
    id: id(),
    machineId: str('machine_id', 64)
      .notNull()
      .references(() => remoteMachines.machineId, { onDelete: 'cascade' }),
    userId: integer('user_id').notNull(),
    permission: str('permission', 10).notNull().default('user'),
    grantedBy: int('granted_by'),
    grantedAt: createdAt(),
  },
  (t) => [uniqueIndex('machine_assignments_key').on(t.machineId, t.userId)],
);

export const apiKeyStore = pgTable(
  'api_key_store',
  {
    id: id(),
    tenantId: int('tenant_id'),
    provider: str('provider', 20).notNull(),
    keyName: str('key_name', 255).notNull(),
    encryptedKey: txt('encrypted_key').notNull(),
    keyHash: str('key_hash', 128).notNull(),
    baseUrl: str('base_url', 500),
    isActive: bool('is_active', true),
    createdBy: int('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    cliTools: txt('cli_tools'),
    cliSettings: txt('cli_settings'),
    /**
     * 0008: a system administrator stored (or last repointed / re-keyed) this key. Such a key may point
     * anywhere and skips the proxy's egress guard; a tenant administrator cannot change or delete it.
     */
    createdBySystemAdmin: bool('created_by_system_admin', false),
  },
  (t) => [
    index('api_key_store_tenant_provider').on(t.tenantId, t.provider),
    uniqueIndex('api_key_store_tenant_name').on(t.tenantId, t.keyName),
  ],
);

/** One-time machine registration tokens; only the SHA-256 of the token is stored. */
export const registrationTokens = pgTable('registration_tokens', {
  id: id(),
  tokenHash: str('token_hash', 128).notNull().unique(),
  tenantId: integer('tenant_id').notNull(),
  createdBy: int('created_by'),
  createdAt: createdAt(),
  expiresAt: ts('expires_at'),
  consumedAt: ts('consumed_at'),
  consumedByMachineId: str('consumed_by_machine_id', 64),
  // Added by 0010_remote_machine_key: a re-enrolment token names the existing machine it may take
  // over (null = new machines only); a revoked token is refused like a consumed one.
  machineId: str('machine_id', 64),
  revokedAt: ts('revoked_at'),
  revokedBy: int('revoked_by'),
});

// Tables introduced by 0003_remote_runtime.

export const remoteRuntimeCommands = pgTable(
  'remote_runtime_commands',
  {
    id: id(),
    commandId: str('command_id', 64).notNull().unique(),
    machineId: str('machine_id', 64).notNull(),
    sessionId: str('session_id', 64),
    commandType: str('command_type', 50).notNull(),
    /** JSON text */
    payload: txt('payload'),
    status: str('status', 12).notNull().default('pending'),
    responsePayload: txt('response_payload'),
    createdAt: createdAt(),
    deliveredAt: ts('delivered_at'),
    respondedAt: ts('responded_at'),
    expiresAt: ts('expires_at'),
    /** Added by 0010_remote_machine_key: the machine generation the command was queued for. */
    machineKey: str('machine_key', 64),
  },
  (t) => [index('remote_runtime_commands_machine_status').on(t.machineId, t.status)],
);

export const remoteRuntimeOutputs = pgTable(
  'remote_runtime_outputs',
  {
    id: id(),
    sessionId: str('session_id', 64).notNull(),
    eventIndex: integer('event_index').notNull(),
    stream: str('stream', 20).notNull(),
    /** JSON text */
    payload: txt('payload'),
    createdAt: createdAt(),
    expiresAt: ts('expires_at'),
    // Added by 0007_remote_output_dedupe: the agent's (run_id, seq) of the line, so an event the agent
    // re-sends after an unacknowledged request is stored once.
    sourceKey: str('source_key', 128),
  },
  (t) => [
    uniqueIndex('remote_runtime_outputs_session_index').on(t.sessionId, t.eventIndex),
    uniqueIndex('remote_runtime_outputs_session_source').on(t.sessionId, t.sourceKey),
  ],
);
