import { bigint, integer, pgTable, uniqueIndex } from 'drizzle-orm/pg-core';
import { counter, day, id, int, str, ts } from './columns.ts';

// Tables introduced by 0043_otel_productivity (issue 29 item 2): what the CLIs' OpenTelemetry metrics
// say about the work itself, beside the usage (which goes to daily_messages, message_source `otel`).

/** Productivity figures per day, user, tenant and CLI, added up from the metric points received. */
export const otelProductivityDaily = pgTable(
  'otel_productivity_daily',
  {
    id: id(),
    date: day().notNull(),
    tenantId: integer('tenant_id').notNull(),
    userId: integer('user_id').notNull(),
    toolName: str('tool_name', 100).notNull(),
    linesAdded: counter('lines_added'),
    linesRemoved: counter('lines_removed'),
    commits: counter('commits'),
    pullRequests: counter('pull_requests'),
    editsAccepted: counter('edits_accepted'),
    editsRejected: counter('edits_rejected'),
    activeMs: counter('active_ms'),
  },
  (t) => [uniqueIndex('otel_productivity_daily_key').on(t.date, t.tenantId, t.userId, t.toolName)],
);

/**
 * The last point taken of each metric series of a user (a series: metric, resource and point
 * attributes, hashed), so a retried export adds nothing and a cumulative series adds only its growth.
 * `value_milli` is the value times 1000 (active time comes in fractional seconds).
 */
export const otelMetricSeries = pgTable(
  'otel_metric_series',
  {
    id: id(),
    userId: integer('user_id').notNull(),
    seriesKey: str('series_key', 64).notNull(),
    startTimeNanos: str('start_time_nanos', 24).notNull(),
    timeNanos: str('time_nanos', 24).notNull(),
    valueMilli: bigint('value_milli', { mode: 'number' }).notNull(),
    tenantId: int('tenant_id'),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('otel_metric_series_key').on(t.userId, t.seriesKey)],
);
