// The Express application: edge middleware (request ids, logs, metrics, body limits), routers, and the
// single error middleware.
import express, { type Express } from 'express';
import type { AppDeps } from '../services/deps.ts';
import { httpLogger } from '../services/logger.ts';
import { jsonBody } from './middleware/body.ts';
import { errorHandler, notFoundHandler } from './middleware/errors.ts';
import { hostCheck } from './middleware/host-check.ts';
import { noSniff } from './middleware/nosniff.ts';
import { mountRoutes, mountStreamingRoutes } from './routes/index.ts';
import { webAppRouter } from './web-app.ts';

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxy(deps.settings.SVC_TRUST_PROXY));
  app.use(noSniff);
  app.use(hostCheck(deps));
  app.use(deps.metrics.middleware);
  app.use(httpLogger(deps.logger));
  mountStreamingRoutes(app, deps);
  // 1 MB, never inflated; the few routes that need more read it after their auth (api/middleware/body.ts).
  app.use(jsonBody);
  mountRoutes(app, deps);
  // The web application (web/dist) after every API route: unknown /api paths still reach notFoundHandler.
  app.use(webAppRouter(undefined, { connectOrigins: deps.settings.SVC_WEB_CONNECT_ORIGINS }));
  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}

function trustProxy(value: string): boolean | number | string {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
