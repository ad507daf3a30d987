// The SQL of the OpenTelemetry ingest (issue 29 item 2, services/otlp/ingest.ts): the proxy's twin of
// a call the CLI reported, the last point of each metric series, the daily productivity figures, and
// their sums for the dashboard, the usage report and ROI.
import { and, between, eq, gte, lte, type SQL, sql } from 'drizzle-orm';
import type { ProductivityFigures } from '../../domain/otlp/productivity.ts';
import type { ReadScope } from '../../domain/tenant-scope.ts';
import type { DatabaseHandle } from '../client.ts';
import { scopeCondition } from '../tenant-scope-sql.ts';

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
     * The figures per day, CLI, user and tenant of days `start`..`end` inside `scope`, for the ROI
     * module's cells (domain/roi/measured.ts), with the user's name.
     */
    async cells(scope: ReadScope, f: { start: string; end: string; toolName?: string; userId?: number }) {
      const inScope = scopeCondition(scope, p.tenantId);
      if (inScope === false) return [];
      const where: SQL[] = [gte(p.date, f.start), lte(p.date, f.end)];
      if (inScope) where.push(inScope);
      if (f.userId !== undefined) where.push(eq(p.userId, f.userId));
      if (f.toolName !== undefined) where.push(eq(p.toolName, f.toolName));
      const rows = await db
        .select({
          date: p.date,
          toolName: p.toolName,
          userId: p.userId,
          tenantId: p.tenantId,
          username: t.users.username,
          linesAdded: p.linesAdded,
          linesRemoved: p.linesRemoved,
          commits: p.commits,
          pullRequests: p.pullRequests,
          editsAccepted: p.editsAccepted,
          editsRejected: p.editsRejected,
          activeMs: p.activeMs,
        })
        .from(p)
        .leftJoin(t.users, eq(t.users.id, p.userId))
        .where(and(...where))
        .orderBy(p.date, p.toolName, p.userId);
      return rows.map(({ date, toolName, userId, tenantId, username, ...figures }) => ({
        date,
        toolName,
        userId,
        tenantId,
        username: username ?? null,
        figures: Object.fromEntries(
          Object.entries(figures).map(([k, v]) => [k, Number(v)]),
        ) as ProductivityFigures,
      }));
    },
  };
}
