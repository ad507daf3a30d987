// The controls of an autonomous workflow (spec document 2, "States and transitions" and "Autonomous
// development"): pause, resume, stop, retry (only failed / planning_timeout), cancel-round at a
// milestone, resume-with-feedback, verification_override, extend-planning-timeout, done; and fork at a
// milestone. Each needs the permission to run workflows (access.ts mayRunAutonomous), checks access (access.ts), validates its body at the edge, then goes through
// services/autonomous/controls.ts (the transition table first: 409 with its reason before any
// Temporal round trip; then the contract's update) and is audited, refused ones included.
import { type Request, Router } from 'express';
import { z } from 'zod';
import { AppError } from '../../../domain/errors.ts';
import { writeAudit } from '../../../services/audit.ts';
import { autonomousControls, type ControlRequest } from '../../../services/autonomous/controls.ts';
import { forkAutonomousWorkflow } from '../../../services/autonomous/fork.ts';
import { autonomousRuns } from '../../../services/autonomous/temporal-runs.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { AUTONOMOUS_PARAMS, autonomousAccess, mayRunAutonomous } from './access.ts';
import { workflowAnswer } from './answers.ts';
import { controlView, workflowView } from './views.ts';

export const MAX_FEEDBACK_CHARS = 20_000;
export const MAX_OVERRIDE_NOTE_CHARS = 2_000;
export const EXTEND_MIN_SECONDS = 60;
export const EXTEND_MAX_SECONDS = 86_400;

const emptyBody = z.object({}).strict();
const feedbackBody = z
  .object({
    feedback: z
      .string({ error: 'is required' })
      .max(MAX_FEEDBACK_CHARS, `must be at most ${MAX_FEEDBACK_CHARS} characters`)
      .refine((v) => v.trim() !== '', 'must not be empty'),
  })
  .strict();
const overrideBody = z
  .object({ note: z.string().max(MAX_OVERRIDE_NOTE_CHARS).nullable().optional() })
  .strict();
const extendBody = z
  .object({ seconds: z.number().int().min(EXTEND_MIN_SECONDS).max(EXTEND_MAX_SECONDS).optional() })
  .strict();

const ACTION: Record<ControlRequest['type'], string> = {
  pause: 'AUTONOMOUS_WORKFLOW_PAUSE',
  resume: 'AUTONOMOUS_WORKFLOW_RESUME',
  stop: 'AUTONOMOUS_WORKFLOW_STOP',
  retry: 'AUTONOMOUS_WORKFLOW_RETRY',
  done: 'AUTONOMOUS_WORKFLOW_DONE',
  cancel_round: 'AUTONOMOUS_WORKFLOW_CANCEL_ROUND',
  resume_with_feedback: 'AUTONOMOUS_WORKFLOW_FEEDBACK',
  extend_planning_timeout: 'AUTONOMOUS_WORKFLOW_EXTEND_PLANNING',
  verification_override: 'AUTONOMOUS_WORKFLOW_VERIFICATION_OVERRIDE',
};

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts). A control
// without a body accepts none or `{}`.
const tags = ['autonomous'];
// controlView: the fresh workflow row merged with the ControlResult.
const controlAnswer = workflowAnswer.extend({ phase: z.string(), paused_by: z.string().nullable() });
const controlled = { responses: { 200: controlAnswer }, errors: [409, 503] };
const control = endpoint({
  params: AUTONOMOUS_PARAMS.workflow,
  tags,
  summary: 'Apply a control to the workflow',
  body: emptyBody,
  ...controlled,
});
const cancelRound = endpoint({
  params: AUTONOMOUS_PARAMS.milestone,
  tags,
  summary: "Cancel the milestone's current round",
  body: emptyBody,
  ...controlled,
});
const resumeWithFeedback = endpoint({
  params: AUTONOMOUS_PARAMS.workflow,
  tags,
  summary: 'Resume with feedback for the agent',
  body: feedbackBody,
  ...controlled,
});
const verificationOverride = endpoint({
  params: AUTONOMOUS_PARAMS.workflow,
  tags,
  summary: 'Accept a failed verification',
  body: overrideBody,
  ...controlled,
});
const extendPlanning = endpoint({
  params: AUTONOMOUS_PARAMS.workflow,
  tags,
  summary: 'Extend the planning timeout',
  body: extendBody,
  ...controlled,
});
const forkAtMilestone = endpoint({
  params: AUTONOMOUS_PARAMS.milestone,
  tags,
  summary: 'Fork a new workflow at a milestone',
  body: emptyBody,
  responses: { 201: workflowAnswer },
  errors: [409, 503],
});

export function autonomousControlsRouter(deps: AppDeps): Router {
  const r = Router();
  const access = autonomousAccess(deps);
  const runs = autonomousRuns(deps.temporal);
  const mayRun = mayRunAutonomous(deps);
  const controls = autonomousControls({ database: deps.database, runs, settings: deps.settings });

  async function run(req: Request, workflowId: string, c: ControlRequest, details: Record<string, unknown>) {
    const user = req.auth.user;
    try {
      const out = await controls.apply(workflowId, c, { userId: user.id, username: user.username });
      await writeAudit(deps, req, {
        action: ACTION[c.type],
        resourceType: 'autonomous_workflow',
        resourceId: workflowId,
        details: { ...details, status: out.result.status },
      });
      return controlView(out.row, out.result);
    } catch (err) {
      if (err instanceof AppError && err.status === 409)
        await writeAudit(deps, req, {
          action: ACTION[c.type],
          resourceType: 'autonomous_workflow',
          resourceId: workflowId,
          success: false,
          details: { ...details, reason: err.message.slice(0, 300) },
          rateLimitKey: `${workflowId}:${c.type}`,
        });
      throw err;
    }
  }

  for (const type of ['pause', 'resume', 'stop', 'retry', 'done'] as const)
    r.post(`/api/autonomous/workflows/:id/${type}`, control, mayRun, async (req, res) => {
      const row = await access.workflow(req);
      control.body(req);
      res.json(await run(req, row.workflowId, { type }, {}));
    });

  r.post('/api/autonomous/workflows/:id/milestones/:mid/cancel', cancelRound, mayRun, async (req, res) => {
    const { workflow, milestone } = await access.milestone(req);
    cancelRound.body(req);
    res.json(
      await run(
        req,
        workflow.workflowId,
        { type: 'cancel_round', milestone },
        { milestone_id: milestone.id },
      ),
    );
  });

  r.post(
    '/api/autonomous/workflows/:id/resume-with-feedback',
    resumeWithFeedback,
    mayRun,
    async (req, res) => {
      const row = await access.workflow(req);
      const { feedback } = resumeWithFeedback.body(req);
      res.json(
        await run(
          req,
          row.workflowId,
          { type: 'resume_with_feedback', feedback },
          { feedback_chars: feedback.length },
        ),
      );
    },
  );

  r.post(
    '/api/autonomous/workflows/:id/verification_override',
    verificationOverride,
    mayRun,
    async (req, res) => {
      const row = await access.workflow(req);
      const { note } = verificationOverride.body(req);
      res.json(await run(req, row.workflowId, { type: 'verification_override', note: note ?? null }, {}));
    },
  );

  r.post(
    '/api/autonomous/workflows/:id/extend-planning-timeout',
    extendPlanning,
    mayRun,
    async (req, res) => {
      const row = await access.workflow(req);
      const { seconds } = extendPlanning.body(req);
      res.json(
        await run(
          req,
          row.workflowId,
          { type: 'extend_planning_timeout', ...(seconds !== undefined ? { seconds } : {}) },
          { seconds: seconds ?? null },
        ),
      );
    },
  );

  r.post('/api/autonomous/workflows/:id/milestones/:mid/fork', forkAtMilestone, mayRun, async (req, res) => {
    const { workflow, milestone } = await access.milestone(req);
    forkAtMilestone.body(req);
    const fork = await forkAutonomousWorkflow({ ...deps, runs }, workflow, milestone);
    await writeAudit(deps, req, {
      action: 'AUTONOMOUS_WORKFLOW_FORK',
      resourceType: 'autonomous_workflow',
      resourceId: fork.workflowId,
      details: { forked_from_workflow_id: workflow.workflowId, forked_from_milestone_id: milestone.id },
    });
    res.status(201).json(workflowView(fork));
  });

  return r;
}
