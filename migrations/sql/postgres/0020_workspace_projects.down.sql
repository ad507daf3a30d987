-- 0020_workspace_projects (postgres, down): frozen by `npm run migrate -- freeze 0020_workspace_projects`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

DROP INDEX IF EXISTS prompt_templates_tenant;

DROP INDEX IF EXISTS projects_tenant_path_active;
