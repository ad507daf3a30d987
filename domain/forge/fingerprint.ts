// A failed check's fingerprint: the check name plus a digest of its normalised error signature, so the
// CI repair loop can tell "the same failure again" from a new one (spec "Limits": automatic CI repair;
// issue 15 refines the signature per check type). Pure and linear in the log's length.
//
// Signature: the last SIGNATURE_LINES non-empty lines of the log tail, each with runs of digits
// replaced by `#` (times, durations, pids, line numbers of a stack that moved, run ids in paths) and
// surrounding whitespace trimmed; the forge's own `[svc]` notes are left out.
import { createHash } from 'node:crypto';

export const SIGNATURE_LINES = 20;

export function errorSignature(logTail: string): string {
  const lines: string[] = [];
  for (const raw of logTail.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('[svc] ')) continue;
    lines.push(line.replace(/[0-9]+/g, '#'));
    if (lines.length > SIGNATURE_LINES) lines.shift();
  }
  return lines.join('\n');
}

export function failureFingerprint(
  checkName: string,
  logTail: string | null,
  exitCode: number | null,
): string {
  const digest = createHash('sha256')
    .update(`${exitCode ?? 'none'}\n${errorSignature(logTail ?? '')}`)
    .digest('hex')
    .slice(0, 16);
  return `${checkName}:${digest}`;
}
