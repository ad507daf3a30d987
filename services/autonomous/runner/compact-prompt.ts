// The compact, self-contained prompt of a retry after a context overflow (spec document 2 "Session
// lines": the provider transcript binding is cleared and the call retried with a compact prompt on a
// fresh provider session of the same line). The caller (the workflow step) normally supplies one built
// from what it knows (the requirement, the plan, the current diff); without one, this builder keeps
// the original prompt's head and tail within COMPACT_PROMPT_MAX_CHARS and says that the earlier
// conversation is gone, so the CLI re-reads the worktree instead of relying on history. A workflow
// prompt's `Step: <kind> (...)` header line (domain/autonomous/prompts.ts) stays the first line, so the
// step is still named where every reader of a prompt looks for it.

export const COMPACT_PROMPT_MAX_CHARS = 24_000;

const PREAMBLE =
  'Your previous conversation for this task exceeded the model context window and was discarded. ' +
  'This prompt is self-contained: inspect the files in the current directory for the work done so far ' +
  'and continue the task below.\n\n';

const STEP_HEADER = 'Step: ';
/** Longest header line kept in front of the preamble. */
const HEADER_MAX_CHARS = 200;

export function buildCompactPrompt(original: string, maxChars = COMPACT_PROMPT_MAX_CHARS): string {
  const newline = original.indexOf('\n');
  const keepHeader = original.startsWith(STEP_HEADER) && newline > 0 && newline <= HEADER_MAX_CHARS;
  const header = keepHeader ? original.slice(0, newline + 1) : '';
  const body = keepHeader ? original.slice(newline + 1) : original;
  const room = Math.max(0, maxChars - PREAMBLE.length - header.length);
  if (body.length <= room) return header + PREAMBLE + body;
  const marker = '\n\n[... middle of the original prompt omitted ...]\n\n';
  const half = Math.max(0, Math.floor((room - marker.length) / 2));
  return header + PREAMBLE + body.slice(0, half) + marker + body.slice(body.length - half);
}
