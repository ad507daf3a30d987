// Reads schemathesis's JUnit report: one <testcase> per operation, failed when it holds a <failure>
// or an <error>. The report is our own tool's output; the reads are linear scans, not backtracking.

export interface OperationOutcome {
  operation: string;
  status: 'passed' | 'failed' | 'skipped';
  message: string;
}

const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#10;/g, '\n')
    .replace(/&amp;/g, '&');

export function parseJunit(xml: string): OperationOutcome[] {
  const out: OperationOutcome[] = [];
  let at = 0;
  for (;;) {
    const start = xml.indexOf('<testcase', at);
    if (start < 0) break;
    const headEnd = xml.indexOf('>', start);
    const head = xml.slice(start, headEnd + 1);
    const selfClosing = head.endsWith('/>');
    const end = selfClosing ? headEnd + 1 : xml.indexOf('</testcase>', headEnd) + '</testcase>'.length;
    const body = selfClosing ? '' : xml.slice(headEnd + 1, end - '</testcase>'.length);
    at = end;
    const name = /\bname="([^"]*)"/.exec(head)?.[1] ?? '?';
    const failed = body.includes('<failure') || body.includes('<error');
    const skipped = !failed && body.includes('<skipped');
    let message = '';
    if (failed) {
      const m =
        /<(?:failure|error)\b([^>]*)>([\s\S]*?)<\/(?:failure|error)>|<(?:failure|error)\b([^>]*)\/>/.exec(
          body,
        );
      const attrs = m?.[1] ?? m?.[3] ?? '';
      message = unescapeXml(m?.[2]?.trim() || /message="([^"]*)"/.exec(attrs)?.[1] || 'failed');
    }
    out.push({
      operation: unescapeXml(name),
      status: failed ? 'failed' : skipped ? 'skipped' : 'passed',
      message,
    });
  }
  return out;
}

/**
 * A failure that is schemathesis's own crash while generating inputs (its traceback runs through its
 * generators and no check named our answer), not an answer of our API.
 */
export function fuzzerCrash(message: string): boolean {
  return (
    message.startsWith('Runtime Error') &&
    /schemathesis\/(generation|specs\/openapi\/coverage)\//.test(message) &&
    !/\bResponse\b|status code|Undocumented|Server error/i.test(message)
  );
}
