import { otelMetricSeries, otelProductivityDaily } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// OpenTelemetry from the CLIs (issue 29 item 2): productivity figures (lines added and removed,
// commits, pull requests, edit decisions, active time) per day, user and CLI, and the last point of
// each metric series so retries and cumulative series count once. Expand: new tables no older build reads.
export default defineMigration({
  id: '0043_otel_productivity',
  kind: 'expand',
  description:
    "otel_productivity_daily: the CLIs' productivity metrics per day, user and tool; otel_metric_series: the last point of each series",
  creates: [otelProductivityDaily, otelMetricSeries],
});
