// Every router of the API, mounted in one place so a route's handler is one step from its path.
import type { Express } from 'express';
import type { AppDeps } from '../deps.ts';
import { adminUsersRouter } from './admin-users.ts';
import { apiKeysRouter } from './api-keys.ts';
import { auditLogsRouter } from './audit-logs.ts';
import { authRouter } from './auth.ts';
import { opsRouter } from './ops.ts';
import { mountRemoteRoutes } from './remote/index.ts';
import { securitySettingsRouter } from './security-settings.ts';
import { tenantsRouter } from './tenants.ts';

/** Routes that read the raw request stream (the model proxy); mounted before the JSON body parser. */
export function mountStreamingRoutes(_app: Express, _deps: AppDeps) {}

export function mountRoutes(app: Express, deps: AppDeps) {
  app.use(opsRouter(deps));
  app.use(authRouter(deps));
  app.use('/api/admin/users', adminUsersRouter(deps));
  app.use('/api/tenants', tenantsRouter(deps));
  app.use('/api/api-keys', apiKeysRouter(deps));
  app.use('/api/security-settings', securitySettingsRouter(deps));
  app.use(auditLogsRouter(deps));
  mountRemoteRoutes(app, deps);
}
