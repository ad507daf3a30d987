// The only SQL of collection runs (issue 10 item 3): collector_files (how far each transcript file was
// read), collector_runs (one row per run of the collection workflow), and the figures of
// GET /api/data-status. Raw SQL with `?` placeholders, the same text on SQLite and PostgreSQL
// (timestamps are passed as Dates and read back through `toDate`: epoch ms on SQLite).
import type { FileState } from '../../domain/collectors/file-state.ts';
import type { RawSql } from '../client.ts';

export type CollectorRunStatus = 'running' | 'completed' | 'failed';

export interface CollectorRunRow {
  runId: string;
  trigger: string;
  status: CollectorRunStatus;
  requestedBy: number | null;
  filesRead: number;
  messagesRead: number;
  messagesStored: number;
  duplicates: number;
  errorCount: number;
  detail: string | null;
  error: string | null;
  startedAt: Date;
  finishedAt: Date | null;
}

export interface RunTotals {
  filesRead: number;
  messagesRead: number;
  messagesStored: number;
  duplicates: number;
  errorCount: number;
}

const toDate = (v: unknown): Date | null =>
  v === null || v === undefined
    ? null
    : v instanceof Date
      ? v
      : new Date(typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : (v as string | number));

const RUN_COLUMNS = `run_id, "trigger", status, requested_by, files_read, messages_read, messages_stored, duplicates,
  error_count, detail, error, started_at, finished_at`;

function runOf(r: Record<string, unknown>): CollectorRunRow {
  return {
    runId: String(r.run_id),
    trigger: String(r.trigger),
    status: r.status as CollectorRunStatus,
    requestedBy: r.requested_by == null ? null : Number(r.requested_by),
    filesRead: Number(r.files_read),
    messagesRead: Number(r.messages_read),
    messagesStored: Number(r.messages_stored),
    duplicates: Number(r.duplicates),
    errorCount: Number(r.error_count),
    detail: (r.detail as string | null) ?? null,
    error: (r.error as string | null) ?? null,
    startedAt: toDate(r.started_at)!,
    finishedAt: toDate(r.finished_at),
  };
}

export function collectorsRepository(sql: RawSql) {
  return {
    async fileState(source: string, path: string): Promise<FileState | undefined> {
      const [r] = await sql.query<{ byte_offset: unknown; size: unknown; head_hash: string | null }>(
        'SELECT byte_offset, size, head_hash FROM collector_files WHERE source = ? AND path = ?',
        [source, path],
      );
      if (!r) return undefined;
      return { byteOffset: Number(r.byte_offset), size: Number(r.size), headHash: r.head_hash ?? '' };
    },

    async saveFileState(source: string, path: string, s: FileState, at: Date): Promise<void> {
      await sql.query(
        `INSERT INTO collector_files (source, path, byte_offset, size, head_hash, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (source, path) DO UPDATE SET byte_offset = excluded.byte_offset, size = excluded.size,
           head_hash = excluded.head_hash, updated_at = excluded.updated_at`,
        [source, path, s.byteOffset, s.size, s.headHash, at],
      );
    },

    /** Creates the run's row unless it exists (the API and the workflow both call this). */
    async ensureRun(runId: string, trigger: string, requestedBy: number | null, at: Date): Promise<void> {
      await sql.query(
        `INSERT INTO collector_runs (run_id, "trigger", status, requested_by, started_at) VALUES (?, ?, 'running', ?, ?)
         ON CONFLICT (run_id) DO NOTHING`,
        [runId, trigger, requestedBy, at],
      );
    },

    async finishRun(
      runId: string,
      outcome: { status: 'completed' | 'failed'; totals: RunTotals; detail: string; error: string | null },
      at: Date,
    ): Promise<void> {
      const t = outcome.totals;
      await sql.query(
        `UPDATE collector_runs SET status = ?, files_read = ?, messages_read = ?, messages_stored = ?, duplicates = ?,
           error_count = ?, detail = ?, error = ?, finished_at = ? WHERE run_id = ?`,
        [
          outcome.status,
          t.filesRead,
          t.messagesRead,
          t.messagesStored,
          t.duplicates,
          t.errorCount,
          outcome.detail,
          outcome.error,
          at,
          runId,
        ],
      );
    },

    async run(runId: string): Promise<CollectorRunRow | undefined> {
      const [r] = await sql.query(`SELECT ${RUN_COLUMNS} FROM collector_runs WHERE run_id = ?`, [runId]);
      return r ? runOf(r) : undefined;
    },

    /** The newest runs first. */
    async recentRuns(limit: number): Promise<CollectorRunRow[]> {
      const rows = await sql.query(`SELECT ${RUN_COLUMNS} FROM collector_runs ORDER BY id DESC LIMIT ?`, [
        limit,
      ]);
      return rows.map(runOf);
    },

    /** Per source: how many files are tracked and when one was last read. */
    async trackedFiles(): Promise<Map<string, { files: number; lastReadAt: Date | null }>> {
      const rows = await sql.query<{ source: string; n: unknown; last: unknown }>(
        'SELECT source, COUNT(*) AS n, MAX(updated_at) AS last FROM collector_files GROUP BY source',
      );
      return new Map(rows.map((r) => [r.source, { files: Number(r.n), lastReadAt: toDate(r.last) }]));
    },

    /**
     * Messages stored per tool name, and the newest one's timestamp, within `scope` (a condition on
     * daily_messages.tenant_id from rawScopeCondition).
     */
    async storedMessages(
      toolNames: readonly string[],
      scope: { sql: string; params: unknown[] } | undefined,
    ): Promise<Map<string, { messages: number; lastMessageAt: Date | null }>> {
      const where = [`tool_name IN (${toolNames.map(() => '?').join(', ')})`];
      const params: unknown[] = [...toolNames];
      if (scope) {
        where.push(scope.sql);
        params.push(...scope.params);
      }
      const rows = await sql.query<{ tool_name: string; n: unknown; last: unknown }>(
        `SELECT tool_name, COUNT(*) AS n, MAX("timestamp") AS last FROM daily_messages WHERE ${where.join(' AND ')}
         GROUP BY tool_name`,
        params,
      );
      return new Map(
        rows.map((r) => [r.tool_name, { messages: Number(r.n), lastMessageAt: toDate(r.last) }]),
      );
    },

    /** Usage reports of remote agents: count and newest, within `scope` (on the reporting user's tenant). */
    async agentReports(
      scope: { sql: string; params: unknown[] } | undefined,
    ): Promise<{ reports: number; lastReceivedAt: Date | null }> {
      const [r] = await sql.query<{ n: unknown; last: unknown }>(
        `SELECT COUNT(*) AS n, MAX(r.created_at) AS last FROM usage_reports r
         ${scope ? `JOIN users u ON u.id = r.user_id WHERE ${scope.sql}` : ''}`,
        scope?.params ?? [],
      );
      return { reports: Number(r?.n ?? 0), lastReceivedAt: toDate(r?.last) };
    },
  };
}

export type CollectorsRepository = ReturnType<typeof collectorsRepository>;
