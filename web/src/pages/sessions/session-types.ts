// The workspace session as GET /api/sessions answers it (api/routes/workspace-sessions.ts
// sessionView), and the status words the pages show. Pure.

export type SessionStatus = 'active' | 'completed' | 'expired';

export interface WorkspaceSession {
  session_id: string;
  tenant_id: number | null;
  user_id: number;
  session_type: string;
  title: string | null;
  tool_name: string;
  host_name: string;
  status: SessionStatus;
  model: string | null;
  project_path: string | null;
  total_tokens: number;
  total_input_tokens: number;
  total_output_tokens: number;
  message_count: number;
  request_count: number;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  expires_at: string | null;
}

export const STATUS_LABEL: Record<SessionStatus, string> = {
  active: 'Active',
  completed: 'Completed',
  expired: 'Expired',
};

/** A session's display name: its title, else tool and short id. */
export const sessionName = (s: Pick<WorkspaceSession, 'title' | 'tool_name' | 'session_id'>) =>
  s.title?.trim() || `${s.tool_name} ${s.session_id.slice(0, 8)}`;
