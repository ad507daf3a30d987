import { usageUploads } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

export default defineMigration({
  id: '0012_usage_uploads',
  kind: 'expand',
  description:
    'usage_uploads: the last uploaded usage report per tenant, day, tool and host, so re-uploading a report adds only its difference',
  creates: [usageUploads],
});
