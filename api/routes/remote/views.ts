// Response shapes of the remote workspace (spec document 1, "Resources and their fields"). The agent
// token hash never leaves the server; status is computed from the last heartbeat at read time.

import { z } from 'zod';
import type { RemoteMachineRow } from '../../../db/repositories/remote-machines.ts';
import type { RemoteSessionRow } from '../../../db/repositories/remote-sessions.ts';
import type { MachineStatus } from '../../../domain/machine-status.ts';
import type { MachinePermission } from '../../../domain/remote-authority.ts';
import type { OutputEvent } from '../../../services/remote-output.ts';
import { iso } from '../../json-dates.ts';

function parseObject(text: string | null): Record<string, unknown> {
  if (!text) return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** `status` is computed by the caller from the heartbeat and the configured offline threshold. */
export function machineView(
  m: RemoteMachineRow,
  status: MachineStatus,
  currentUserPermission?: MachinePermission,
) {
  return {
    machine_id: m.machineId,
    machine_name: m.machineName,
    hostname: m.hostname,
    os_type: m.osType,
    os_version: m.osVersion,
    ip_address: m.ipAddress,
    status,
    connected: status === 'online',
    capabilities: parseObject(m.capabilities),
    agent_version: m.agentVersion,
    cli_path: m.cliPath,
    work_dir: m.workDir,
    tenant_id: m.tenantId,
    created_by: m.createdBy,
    created_at: iso(m.createdAt),
    updated_at: iso(m.updatedAt),
    last_heartbeat: iso(m.lastHeartbeat),
    ...(currentUserPermission ? { current_user_permission: currentUserPermission } : {}),
  };
}

export function sessionView(s: RemoteSessionRow) {
  return {
    session_id: s.sessionId,
    status: s.status,
    machine_id: s.remoteMachineId,
    project_path: s.projectPath,
    model: s.model,
    cli_tool: s.toolName,
    title: s.title,
    user_id: s.userId,
    tenant_id: s.tenantId,
    workspace_type: s.workspaceType,
    total_tokens: s.totalTokens,
    message_count: s.messageCount,
    created_at: iso(s.createdAt),
    updated_at: iso(s.updatedAt),
    paused_at: iso(s.pausedAt),
    completed_at: iso(s.completedAt),
    /** Null while (or if ever) the CLI has not run: a "completed" session without it never started. */
    cli_started_at: iso(s.cliStartedAt),
  };
}

export function sessionDetailView(s: RemoteSessionRow, output: OutputEvent[], nextIndex: number) {
  return { ...sessionView(s), output, output_next_index: nextIndex };
}

// The same shapes as zod schemas, for /api/openapi.json (api/openapi/endpoint.ts); the document test
// checks real answers against them.
const text = z.string().nullable();
const int = z.number().int();
export const machineSchema = z.object({
  machine_id: z.string(),
  machine_name: text,
  hostname: text,
  os_type: text,
  os_version: text,
  ip_address: text,
  status: z.enum(['online', 'offline']),
  connected: z.boolean(),
  capabilities: z.record(z.string(), z.unknown()),
  agent_version: text,
  cli_path: text,
  work_dir: text,
  tenant_id: int.nullable(),
  created_by: int.nullable(),
  created_at: text,
  updated_at: text,
  last_heartbeat: text,
  current_user_permission: z.string().optional(),
});
export const sessionSchema = z.object({
  session_id: z.string(),
  status: z.string(),
  machine_id: text,
  project_path: text,
  model: text,
  cli_tool: text,
  title: text,
  user_id: int.nullable(),
  tenant_id: int.nullable(),
  workspace_type: text,
  total_tokens: int.nullable(),
  message_count: int.nullable(),
  created_at: text,
  updated_at: text,
  paused_at: text,
  completed_at: text,
  cli_started_at: text.meta({ description: 'When the CLI first ran; null: it has not (or never) started' }),
});
export const outputEventSchema = z.object({
  event_index: int,
  stream: z.string(),
  data: z.string(),
  timestamp: z.string(),
});
export const sessionDetailSchema = sessionSchema.extend({
  output: z.array(outputEventSchema),
  output_next_index: int,
});
