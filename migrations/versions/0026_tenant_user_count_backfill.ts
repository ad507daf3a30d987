import { defineMigration } from '../migration.ts';

// tenants.user_count becomes a maintained figure (db/repositories/tenants.ts, recountTenantUsers: the
// tenant's users that are not soft-deleted, deactivated ones included) and the tenants API reads it
// instead of counting live. This backfill sets it once for the tenants written before it was kept;
// from here on every user write recounts the tenants it touches in its own transaction. Expand: an
// older build never relied on the column, so it can keep serving the database. Down: nothing to undo
// (the column stays; its figure is simply correct).
export default defineMigration({
  id: '0026_tenant_user_count_backfill',
  kind: 'expand',
  description:
    'backfill tenants.user_count (users not soft-deleted) once; kept by every user write from now on',
  async up(sql) {
    await sql.exec(
      'UPDATE tenants SET user_count = (SELECT COUNT(*) FROM users u WHERE u.tenant_id = tenants.id AND u.deleted_at IS NULL)',
    );
  },
});
