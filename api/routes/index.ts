// Every router of the API, mounted in one place so a route's handler is one step from its path.
import type { Express } from 'express';
import type { AppDeps } from '../deps.ts';
import { opsRouter } from './ops.ts';

/** Routes that read the raw request stream (the model proxy); mounted before the JSON body parser. */
export function mountStreamingRoutes(_app: Express, _deps: AppDeps) {}

export function mountRoutes(app: Express, deps: AppDeps) {
  app.use(opsRouter(deps));
}
