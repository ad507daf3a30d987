// Wire shapes of PROTOCOL.md (agent <-> server). Keep this file and PROTOCOL.md in step.

export interface Command {
  command_id: string;
  command_type: string;
  session_id?: string | null;
  payload?: Record<string, unknown> | null;
  created_at?: string;
}

export type OutputStream = 'stdout' | 'stderr' | 'system' | 'permission';
export type SessionState = 'running' | 'paused' | 'exited';

export interface OutputEvent {
  type: 'output';
  session_id: string;
  /** UUID picked when the agent starts the session; (session_id, run_id, seq) is the dedupe key. */
  run_id: string;
  seq: number;
  stream: OutputStream;
  data: string;
  timestamp: string;
}

export interface ResponseEvent {
  type: 'response';
  command_id: string;
  payload: Record<string, unknown>;
}

export interface SessionStateEvent {
  type: 'session_state';
  session_id: string;
  state: SessionState;
  exit_code?: number | null;
  signal?: string | null;
  timestamp: string;
}

export type AgentEvent = OutputEvent | ResponseEvent | SessionStateEvent;

export interface Heartbeat {
  active_sessions: string[];
  agent_version: string;
}

export interface MessageRequest {
  wait_ms: number;
  heartbeat: Heartbeat;
  events: AgentEvent[];
}

export interface MessageResponse {
  commands: Command[];
  server_time?: string;
}

export interface RegisterRequest {
  registration_token: string;
  machine_id: string;
  machine_name: string;
  hostname: string;
  os_type: string;
  os_version: string;
  capabilities: Record<string, unknown>;
  agent_version: string;
  cli_path: string;
  work_dir: string;
  /** The current agent token, when re-registering a machine already registered (proves ownership). */
  agent_token?: string;
}

export interface RegisterResponse {
  machine_id?: string;
  agent_token: string;
}

export const MAX_WAIT_MS = 25000;
