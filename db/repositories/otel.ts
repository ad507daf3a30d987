// The SQL of the OpenTelemetry ingest (issue 29 item 2, services/otlp/ingest.ts): the proxy's twin of
// a call the CLI reported, the last point of each metric series, the daily productivity figures, and
// their sums for the dashboard, the usage report and ROI.
import { and, between, eq, gte, inArray, lte, type SQL, sql } from 'drizzle-orm';
import type { ProductivityFigures } from '../../domain/otlp/productivity.ts';
import type { DatabaseHandle } from '../client.ts';

type Db = Pick<DatabaseHandle, 'db' | 't'>;

export function otelRepository({ db, t }: Db) {
  const m = t.dailyMessages;
  const p = t.otelProductivityDaily;
  const s = t.otelMetricSeries;
  return {
    /**
     * Whether the proxy already recorded this call through a gateway key: an assistant row of
     * message_source `gateway` of the same user, model and token counts within `from`..`to`.
     */
    async hasGatewayTwin(q: {
      userId: number;
      model: string | null;
      inputTokens: number;
      outputTokens: number;
      from: Date;
      to: Date;
    }): Promise<boolean> {
      const rows = await db
        .select({ id: m.id })
        .from(m)
        .where(
          and(
            eq(m.userId, q.userId),
            eq(m.messageSource, 'gateway'),
            eq(m.role, 'assistant'),
            q.model === null ? sql`${m.model} IS NULL` : eq(m.model, q.model),
            eq(m.inputTokens, q.inputTokens),
            eq(m.outputTokens, q.outputTokens),
            between(m.timestamp, q.from, q.to),
          ),
        )
        .limit(1);
      return rows.length > 0;
    },

    async series(userId: number, seriesKey: string) {
      const [row] = await db
        .select({ startTimeNanos: s.startTimeNanos, timeNanos: s.timeNanos, valueMilli: s.valueMilli })
        .from(s)
        .where(and(eq(s.userId, userId), eq(s.seriesKey, seriesKey)));
      return row;
    },

    async saveSeries(v: {
      userId: number;
      tenantId: number;
      seriesKey: string;
      startTimeNanos: string;
      timeNanos: string;
      valueMilli: number;
      at: Date;
    }) {
      const set = {
        startTimeNanos: v.startTimeNanos,
        timeNanos: v.timeNanos,
        valueMilli: v.valueMilli,
        updatedAt: v.at,
      };
      await db
        .insert(s)
        .values({ ...set, userId: v.userId, tenantId: v.tenantId, seriesKey: v.seriesKey })
        .onConflictDoUpdate({ target: [s.userId, s.seriesKey], set });
    },

    /** Adds `figures` to the day's row of the user, tenant and tool. */
    async addFigures(
      key: { date: string; tenantId: number; userId: number; toolName: string },
      figures: ProductivityFigures,
    ) {
      const plus = (col: (typeof p)['linesAdded'], name: string) => sql`${col} + excluded.${sql.raw(name)}`;
      await db
        .insert(p)
        .values({ ...key, ...figures })
        .onConflictDoUpdate({
          target: [p.date, p.tenantId, p.userId, p.toolName],
          set: {
            linesAdded: plus(p.linesAdded, 'lines_added'),
            linesRemoved: plus(p.linesRemoved, 'lines_removed'),
            commits: plus(p.commits, 'commits'),
            pullRequests: plus(p.pullRequests, 'pull_requests'),
            editsAccepted: plus(p.editsAccepted, 'edits_accepted'),
            editsRejected: plus(p.editsRejected, 'edits_rejected'),
            activeMs: plus(p.activeMs, 'active_ms'),
          },
        });
    },

    /**
     * The figures of days `from`..`to` (YYYY-MM-DD), limited to `tenantIds` (undefined: all) and to
     * `userId` when given, grouped by `groupBy` columns (none: one total row).
     */
    async sums(q: {
      from: string;
      to: string;
      tenantIds?: number[];
      userId?: number;
      toolName?: string;
      groupBy?: Array<'date' | 'userId' | 'toolName' | 'tenantId'>;
    }) {
      const where: SQL[] = [gte(p.date, q.from), lte(p.date, q.to)];
      if (q.tenantIds) where.push(q.tenantIds.length ? inArray(p.tenantId, q.tenantIds) : sql`1 = 0`);
      if (q.userId !== undefined) where.push(eq(p.userId, q.userId));
      if (q.toolName !== undefined) where.push(eq(p.toolName, q.toolName));
      const total = (col: (typeof p)['linesAdded']) => sql<number>`coalesce(sum(${col}), 0)`.mapWith(Number);
      const groups = (q.groupBy ?? []).map((k) => p[k]);
      const rows = await db
        .select({
          date: sql<string | null>`${groups.includes(p.date) ? p.date : sql`NULL`}`,
          userId: sql<number | null>`${groups.includes(p.userId) ? p.userId : sql`NULL`}`,
          toolName: sql<string | null>`${groups.includes(p.toolName) ? p.toolName : sql`NULL`}`,
          tenantId: sql<number | null>`${groups.includes(p.tenantId) ? p.tenantId : sql`NULL`}`,
          linesAdded: total(p.linesAdded),
          linesRemoved: total(p.linesRemoved),
          commits: total(p.commits),
          pullRequests: total(p.pullRequests),
          editsAccepted: total(p.editsAccepted),
          editsRejected: total(p.editsRejected),
          activeMs: total(p.activeMs),
          rows: sql<number>`count(*)`.mapWith(Number),
        })
        .from(p)
        .where(and(...where))
        .groupBy(...groups);
      return rows;
    },
  };
}
