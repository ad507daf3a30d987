import { dailyUsage } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

export default defineMigration({
  id: '0011_usage_estimated_tokens',
  kind: 'expand',
  description:
    'estimated_tokens on daily_usage: how many of the recorded tokens the proxy estimated (streams without a usage report)',
  addsColumns: [[dailyUsage, [dailyUsage.estimatedTokens]]],
});
