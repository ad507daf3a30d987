// The only SQL for projects and user_projects (spec document 2, "Workspace and projects"). A project
// is upserted per tenant and path on the partial unique index of 0020_workspace_projects (unique among
// active projects), so concurrent sessions for a new path share one row; user_projects counters are
// incremented in the database. Same SQL text on both dialects.
import type { RawSql } from '../../client.ts';

export function projectsRepository(sql: RawSql) {
  return {
    /** The tenant's active project at `path`, created (named `name`, by `userId`) when absent. */
    async upsert(tenantId: number, path: string, name: string, userId: number): Promise<number> {
      await sql.query(
        'INSERT INTO projects (tenant_id, path, name, created_by) VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id, path) WHERE is_active DO NOTHING',
        [tenantId, path, name, userId],
      );
      const [row] = await sql.query<{ id: number }>(
        'SELECT id FROM projects WHERE tenant_id = ? AND path = ? AND is_active',
        [tenantId, path],
      );
      return Number(row!.id);
    },

    /** One more session of the user in the project. */
    async countSession(userId: number, projectId: number): Promise<void> {
      await sql.query(
        `INSERT INTO user_projects (user_id, project_id, total_sessions) VALUES (?, ?, 1)
         ON CONFLICT (user_id, project_id) DO UPDATE SET total_sessions = user_projects.total_sessions + 1`,
        [userId, projectId],
      );
    },

    /** Tokens and requests of one message added to the user's project totals. */
    async addUsage(userId: number, projectId: number, tokens: number, requests: number): Promise<void> {
      await sql.query(
        `INSERT INTO user_projects (user_id, project_id, total_tokens, total_requests) VALUES (?, ?, ?, ?)
         ON CONFLICT (user_id, project_id) DO UPDATE SET total_tokens = user_projects.total_tokens + ?,
           total_requests = user_projects.total_requests + ?`,
        [userId, projectId, tokens, requests, tokens, requests],
      );
    },
  };
}
