// The autonomous development routers (spec document 2, "Autonomous development"; issue 13 item 8),
// mounted together behind one authentication of /api/autonomous: resources (workflows.ts), controls
// and fork (controls.ts), milestone and pull request reads (reads.ts), the activity stream
// (events-stream.ts).
import { type Express, Router } from 'express';
import type { AppDeps } from '../../../services/deps.ts';
import { authenticate } from '../../middleware/auth.ts';
import { autonomousControlsRouter } from './controls.ts';
import { autonomousEventsRouter } from './events-stream.ts';
import { autonomousReadsRouter } from './reads.ts';
import { autonomousWorkflowsRouter } from './workflows.ts';

export function autonomousRouter(deps: AppDeps): Router {
  const r = Router();
  r.use('/api/autonomous', authenticate(deps));
  r.use(autonomousWorkflowsRouter(deps));
  r.use(autonomousControlsRouter(deps));
  r.use(autonomousReadsRouter(deps));
  r.use(autonomousEventsRouter(deps));
  return r;
}

export function mountAutonomousRoutes(app: Express, deps: AppDeps) {
  app.use(autonomousRouter(deps));
}
