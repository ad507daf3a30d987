// Response shapes of autonomous development (spec document 2, "Autonomous workflow records"; the spec
// leaves the bodies open). A workflow is its row in snake_case with `id` = the workflow id (the
// internal serial is not shown) and the definition snapshot parsed; a milestone is its row in
// snake_case. Timestamps are ISO 8601. No column of these tables holds a secret (a session line's
// proxy token is only ever referenced by id, and that table is not shown here).
import type { MilestoneRow } from '../../../db/repositories/autonomous/milestones.ts';
import {
  type BatchRow,
  parseDiagnosticsState,
  parseFingerprints,
  type WorkflowRow,
} from '../../../db/repositories/autonomous/workflows.ts';
import type { ControlResult } from '../../../workflows/autonomous/contract.ts';

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function snakeRow(row: Record<string, unknown>, skip: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (skip.includes(k)) continue;
    out[snake(k)] = v instanceof Date ? v.toISOString() : v;
  }
  return out;
}

function parsedSnapshot(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export function workflowView(w: WorkflowRow) {
  return {
    id: w.workflowId,
    ...snakeRow(w, ['id', 'definitionSnapshot', 'ciFailureFingerprints', 'ciDiagnosticsState']),
    definition_snapshot: parsedSnapshot(w.definitionSnapshot),
    // JSON text on the row, shown as what it holds: a list of fingerprints, an object or null.
    ci_failure_fingerprints: parseFingerprints(w.ciFailureFingerprints),
    ci_diagnostics_state: parseDiagnosticsState(w.ciDiagnosticsState),
  };
}

/** The detail view: the workflow, its milestone count and its four stable session line ids. */
export function workflowDetailView(w: WorkflowRow, milestoneCount: number) {
  return {
    ...workflowView(w),
    milestone_count: milestoneCount,
    session_lines: {
      main: w.mainSessionId,
      review: w.reviewSessionId,
      test: w.testSessionId,
      verification: w.verificationSessionId,
    },
  };
}

export function milestoneView(m: MilestoneRow) {
  return snakeRow(m, []);
}

export function batchView(b: BatchRow) {
  return { id: b.batchId, ...snakeRow(b, ['id']) };
}

/** A control's answer: the ControlResult merged into the fresh row. */
export function controlView(row: WorkflowRow, result: ControlResult) {
  return { ...workflowView(row), ...result };
}
