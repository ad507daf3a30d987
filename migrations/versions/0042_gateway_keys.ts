import { gatewayKeys, gatewayKeyUsage } from '../../db/schema/index.ts';
import { defineMigration } from '../migration.ts';

// Personal gateway keys (issue 29 item 1): a user's own credential for the CLIs on their laptop, used
// with the model proxy; stored as a SHA-256 hash, bound to one provider, with optional lower limits
// counted per day and month in gateway_key_usage. Expand: new tables no older build reads.
export default defineMigration({
  id: '0042_gateway_keys',
  kind: 'expand',
  description:
    'gateway_keys: personal gateway keys (hashed, one provider, optional expiry and limits); gateway_key_usage: their use per day and month',
  creates: [gatewayKeys, gatewayKeyUsage],
});
