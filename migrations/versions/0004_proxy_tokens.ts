import { proxyTokens, usageReports } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

export default defineMigration({
  id: '0004_proxy_tokens',
  kind: 'expand',
  description: 'proxy-token issuance records and agent usage reports',
  creates: [proxyTokens, usageReports],
});
