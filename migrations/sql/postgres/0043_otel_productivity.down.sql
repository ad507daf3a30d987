-- 0043_otel_productivity (postgres, down): frozen by `npm run migrate -- freeze 0043_otel_productivity`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TABLE IF EXISTS "otel_metric_series";

DROP TABLE IF EXISTS "otel_productivity_daily";
