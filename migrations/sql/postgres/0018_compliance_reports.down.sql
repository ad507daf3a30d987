-- 0018_compliance_reports (postgres, down): frozen by `npm run migrate -- freeze 0018_compliance_reports`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP TABLE IF EXISTS "compliance_reports";
