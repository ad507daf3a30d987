// Response schemas of the autonomous routes for /api/openapi.json (api/openapi/endpoint.ts), written
// from the views that build the answers (views.ts). Objects stay open (`additionalProperties`): a
// view is a row in snake_case, so a column added later is an extra field, not a broken answer.
import { z } from 'zod';

const nullableText = z.string().nullable();
const nullableInt = z.number().int().nullable();

/** workflowView: the row in snake_case, `id` = the workflow id, the definition snapshot parsed. */
export const workflowAnswer = z.looseObject({
  id: z.string(),
  workflow_id: z.string(),
  tenant_id: nullableInt,
  user_id: z.number().int(),
  batch_id: nullableText,
  batch_position: nullableInt,
  title: nullableText,
  current_phase: z.string(),
  status: z.string(),
  development_round: z.number().int(),
  project_path: nullableText,
  branch: nullableText,
  pr_number: nullableInt,
  pr_url: nullableText,
  definition_snapshot: z.looseObject({}).nullable(),
  total_tokens: z.number().int(),
  ci_repair_attempts: z.number().int(),
  ci_failure_fingerprints: z.array(z.string()),
  ci_diagnostics_state: z
    .looseObject({
      status: z.enum(['diagnosed', 'waiting', 'insufficient']),
      evidence: z.string(),
      polls: z.number().int(),
      max_polls: z.number().int(),
      checked_at: z.string(),
    })
    .nullable(),
  verification_status: nullableText,
  verification_attempts: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  completed_at: z.string().nullable(),
});

/** workflowDetailView: the workflow, its milestone count and its four session line ids. */
export const workflowDetailAnswer = workflowAnswer.extend({
  milestone_count: z.number().int(),
  session_lines: z.looseObject({
    main: nullableText,
    review: nullableText,
    test: nullableText,
    verification: nullableText,
  }),
});

/** batchView: the batch row in snake_case, `id` = the batch id. */
export const batchAnswer = z.looseObject({ id: z.string(), batch_id: z.string() });

/** milestoneView: the milestone row in snake_case. */
export const milestoneAnswer = z.looseObject({ id: z.number().int(), workflow_id: z.string() });

/** POST /api/autonomous/workflows: one workflow, or a batch with its workflows. */
export const createdAnswer = z.union([
  workflowAnswer,
  z.looseObject({ batch: batchAnswer, workflows: z.array(workflowAnswer) }),
]);
