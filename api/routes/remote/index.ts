// The remote workspace routers (spec document 1): machines, assignments, the agent endpoints,
// sessions and their output stream. Each router declares full paths and its own authentication.
import type { Express } from 'express';
import type { AppDeps } from '../../../services/deps.ts';
import { assignmentsRouter } from './assignments.ts';
import { machinesRouter } from './machines.ts';
import { outputStreamRouter } from './output-stream.ts';
import { registrationTokensRouter } from './registration-tokens.ts';
import { sessionsRouter } from './sessions.ts';

/** The user-facing remote routes; the agent endpoints come first of all (api/routes/index.ts). */
export function mountRemoteRoutes(app: Express, deps: AppDeps) {
  // Before machinesRouter: /api/remote/machines/registration-tokens must not match /machines/:id.
  app.use(registrationTokensRouter(deps));
  app.use(machinesRouter(deps));
  app.use(assignmentsRouter(deps));
  app.use(outputStreamRouter(deps));
  app.use(sessionsRouter(deps));
}
