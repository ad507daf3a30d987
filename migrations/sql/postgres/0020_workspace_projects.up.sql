-- 0020_workspace_projects (postgres, up): frozen by `npm run migrate -- freeze 0020_workspace_projects`.
-- Applied as-is by the runner. Never edit a released file; add a new migration instead.

UPDATE projects SET is_active = false WHERE is_active AND id NOT IN (SELECT MIN(id) FROM projects WHERE is_active GROUP BY tenant_id, path);

CREATE UNIQUE INDEX IF NOT EXISTS projects_tenant_path_active ON projects (tenant_id, path) WHERE is_active;

CREATE INDEX IF NOT EXISTS prompt_templates_tenant ON prompt_templates (tenant_id);
