import { defineMigration } from '../migration.ts';

// Workspace projects (spec document 2, "Workspace and projects": a project path is unique per tenant
// among active projects). Sessions upsert their project with ON CONFLICT on this partial unique index,
// so two sessions created at once for the same new path share one row. Active duplicates left by
// older builds (none wrote the table, but be safe) are deactivated first, keeping the oldest.
// `WHERE is_active` reads the same on both dialects (SQLite stores the boolean as 0/1).
export default defineMigration({
  id: '0020_workspace_projects',
  kind: 'expand',
  description: 'projects: unique (tenant_id, path) among active projects; prompt_templates tenant index',
  async up(sql) {
    const no = sql.dialect === 'postgres' ? 'false' : '0';
    await sql.exec(
      `UPDATE projects SET is_active = ${no} WHERE is_active AND id NOT IN (SELECT MIN(id) FROM projects WHERE is_active GROUP BY tenant_id, path)`,
    );
    await sql.exec(
      'CREATE UNIQUE INDEX IF NOT EXISTS projects_tenant_path_active ON projects (tenant_id, path) WHERE is_active',
    );
    await sql.exec('CREATE INDEX IF NOT EXISTS prompt_templates_tenant ON prompt_templates (tenant_id)');
  },
  async down(sql) {
    await sql.exec('DROP INDEX IF EXISTS prompt_templates_tenant');
    await sql.exec('DROP INDEX IF EXISTS projects_tenant_path_active');
  },
});
