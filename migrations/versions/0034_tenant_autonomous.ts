import { tenantAutonomousSettings } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// Who may run autonomous workflows, per tenant, and the tenant's own GitHub token (issue 25 item 2):
// one row per tenant that changed a default (roles allowed to run and control workflows; the GitHub
// token as ciphertext with a four-character hint). Expand: a new table no older build reads.
export default defineMigration({
  id: '0034_tenant_autonomous',
  kind: 'expand',
  description:
    'tenant_autonomous_settings: roles that may run autonomous workflows, tenant GitHub token (ciphertext)',
  creates: [tenantAutonomousSettings],
});
