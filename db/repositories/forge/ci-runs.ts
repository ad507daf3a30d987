// The only SQL of forge_ci_runs (migration 0024_local_forge): a run is inserted `queued`, becomes
// `running` when its process starts, and is finished once with its status, exit code and log tail.
// PostgreSQL text cannot hold NUL, so NULs in the log tail are replaced before the write.
import type { CiRun, CiStatus } from '../../../domain/forge/types.ts';
import type { RawSql } from '../../client.ts';

interface Row {
  id: number | string;
  pull_request_id: number | string;
  head_sha: string;
  command: string;
  status: string;
  exit_code: number | string | null;
  log_tail: string | null;
  started_at: Date | number | null;
  finished_at: Date | number | null;
}

const date = (v: Date | number | null) => (v == null ? null : v instanceof Date ? v : new Date(Number(v)));

const toRun = (r: Row): CiRun => ({
  id: Number(r.id),
  pullRequestId: Number(r.pull_request_id),
  headSha: r.head_sha,
  command: r.command,
  status: r.status as CiStatus,
  exitCode: r.exit_code == null ? null : Number(r.exit_code),
  logTail: r.log_tail,
  startedAt: date(r.started_at),
  finishedAt: date(r.finished_at),
});

export function forgeCiRunsRepository(sql: RawSql) {
  const byId = async (id: number) => {
    const [row] = await sql.query<Row>('SELECT * FROM forge_ci_runs WHERE id = ?', [id]);
    return row ? toRun(row) : undefined;
  };
  return {
    byId,

    async insertQueued(pullRequestId: number, headSha: string, command: string): Promise<CiRun> {
      const [row] = await sql.query<{ id: number }>(
        "INSERT INTO forge_ci_runs (pull_request_id, head_sha, command, status) VALUES (?, ?, ?, 'queued') RETURNING id",
        [pullRequestId, headSha, command],
      );
      return (await byId(Number(row!.id)))!;
    },

    async markRunning(id: number, at: Date): Promise<void> {
      await sql.query(
        "UPDATE forge_ci_runs SET status = 'running', started_at = ? WHERE id = ? AND status = 'queued'",
        [at, id],
      );
    },

    async finish(
      id: number,
      f: {
        status: Exclude<CiStatus, 'queued' | 'running'>;
        exitCode: number | null;
        logTail: string;
        at: Date;
      },
    ): Promise<CiRun> {
      await sql.query(
        `UPDATE forge_ci_runs SET status = ?, exit_code = ?, log_tail = ?, finished_at = ?,
           started_at = COALESCE(started_at, ?) WHERE id = ?`,
        [f.status, f.exitCode, f.logTail.replaceAll('\0', '\uFFFD'), f.at, f.at, id],
      );
      return (await byId(id))!;
    },

    /** The newest run of the PR for `headSha`. */
    async latestFor(pullRequestId: number, headSha: string): Promise<CiRun | undefined> {
      const [row] = await sql.query<Row>(
        'SELECT * FROM forge_ci_runs WHERE pull_request_id = ? AND head_sha = ? ORDER BY id DESC LIMIT 1',
        [pullRequestId, headSha],
      );
      return row ? toRun(row) : undefined;
    },

    async listFor(pullRequestId: number): Promise<CiRun[]> {
      const rows = await sql.query<Row>('SELECT * FROM forge_ci_runs WHERE pull_request_id = ? ORDER BY id', [
        pullRequestId,
      ]);
      return rows.map(toRun);
    },
  };
}
