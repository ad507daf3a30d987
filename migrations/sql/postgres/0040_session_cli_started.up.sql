-- 0040_session_cli_started (postgres, up): frozen by `npm run migrate -- freeze 0040_session_cli_started`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

ALTER TABLE "agent_sessions" ADD COLUMN "cli_started_at" timestamp with time zone;

UPDATE agent_sessions SET cli_started_at = created_at
       WHERE workspace_type = 'remote' AND cli_started_at IS NULL
         AND (message_count > 0 OR total_tokens > 0 OR EXISTS (
           SELECT 1 FROM remote_runtime_outputs o
           WHERE o.session_id = agent_sessions.session_id AND o.stream = 'system'
             AND o.payload LIKE '%CLI started (pid%'));
