// Response shapes of the remote workspace API (api/routes/remote/views.ts) as the pages use them.
import type { OutputEvent } from './output-model.ts';

export interface RemoteMachine {
  machine_id: string;
  machine_name: string | null;
  hostname: string | null;
  status: string;
  work_dir: string | null;
  capabilities: { cli_tools?: unknown };
  current_user_permission?: string;
}

export interface RemoteSession {
  session_id: string;
  status: string;
  machine_id: string | null;
  project_path: string | null;
  model: string | null;
  cli_tool: string | null;
  title: string | null;
  total_tokens: number | null;
  message_count: number | null;
  created_at: string | null;
  updated_at: string | null;
  /** When the agent reported the CLI process started; null: it has not (or never) started. */
  cli_started_at?: string | null;
}

export interface RemoteSessionDetail extends RemoteSession {
  output: OutputEvent[];
  output_next_index: number;
}

/**
 * The status word of a remote session: its status, except that a session which ended without its CLI
 * ever running (the agent refused the start, or the spawn failed) did not "complete" anything.
 */
export function sessionStatusWord(s: Pick<RemoteSession, 'status' | 'cli_started_at'>): string {
  if (s.status === 'completed' && !s.cli_started_at) return 'ended before the CLI started';
  return s.status;
}

export const isLive = (status: string) => status === 'active' || status === 'paused';

/** CLI tools a machine announced (capabilities.cli_tools), strings only. */
export function toolsOf(m: RemoteMachine | undefined): string[] {
  const t = m?.capabilities?.cli_tools;
  return Array.isArray(t) ? t.filter((x): x is string => typeof x === 'string') : [];
}

export const machineLabel = (m: RemoteMachine) => m.machine_name || m.hostname || m.machine_id;
