import { uploadTokens } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// Personal upload tokens (issue 25 item 5): a user's own credential for their collectors, stored as a
// SHA-256 hash; uploads made with one count for its owner. Expand: a new table no older build reads.
export default defineMigration({
  id: '0035_upload_tokens',
  kind: 'expand',
  description: 'upload_tokens: personal upload tokens (hashed), listed and revocable by their owner',
  creates: [uploadTokens],
});
