// The browser terminal's reconnect decision (DOM-free, unit-tested in test/unit/web-remote-terminal.test.ts).
// The relay (api/terminal-socket.ts) closes with 3010 and the reason `{"owner": "<instance url>"}` when
// another API instance holds the session's relay: the browser reconnects to that instance's terminal
// path. Only http(s) owners are followed, at most MAX_HOPS times in a row, so a misconfigured pair of
// instances pointing at each other cannot make the page loop.

export const TERMINAL_NOT_OWNER = 3010;
export const MAX_HOPS = 3;

export function terminalPath(sessionId: string, size?: { cols: number; rows: number }): string {
  const q = size ? `?cols=${size.cols}&rows=${size.rows}` : '';
  return `/api/remote/sessions/${encodeURIComponent(sessionId)}/terminal${q}`;
}

/** ws(s)://host/... for a page at `origin` (http(s)://host). */
export function terminalUrl(
  origin: string,
  sessionId: string,
  size?: { cols: number; rows: number },
): string {
  const u = new URL(origin);
  const scheme = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${u.host}${terminalPath(sessionId, size)}`;
}

export type CloseDecision = { action: 'reconnect'; url: string } | { action: 'stop'; message: string };

/**
 * What to do after the terminal socket closed with `code` and `reason` (the raw close reason text),
 * having already followed `hops` owner redirects.
 */
export function decideOnClose(
  code: number,
  reason: string,
  sessionId: string,
  hops: number,
  size?: { cols: number; rows: number },
): CloseDecision {
  if (code !== TERMINAL_NOT_OWNER) return { action: 'stop', message: closeMessage(code, reason) };
  if (hops >= MAX_HOPS)
    return { action: 'stop', message: 'The terminal could not reach the instance holding it' };
  let owner: unknown;
  try {
    owner = (JSON.parse(reason) as { owner?: unknown }).owner;
  } catch {
    owner = undefined;
  }
  if (typeof owner !== 'string')
    return { action: 'stop', message: 'The terminal moved, but no address was given' };
  let u: URL;
  try {
    u = new URL(owner);
  } catch {
    return { action: 'stop', message: 'The terminal moved to an address that is not valid' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return { action: 'stop', message: 'The terminal moved to an address that is not valid' };
  return { action: 'reconnect', url: terminalUrl(u.origin, sessionId, size) };
}

/** The close frame in words: the relay's JSON reason ({error} or {reason}), else the code. */
export function closeMessage(code: number, reason: string): string {
  let said = '';
  try {
    const v = JSON.parse(reason) as { error?: unknown; reason?: unknown };
    if (typeof v.error === 'string') said = v.error;
    else if (v.reason === 'exited') said = 'the shell exited';
    else if (v.reason === 'session_ended') said = 'the session ended';
    else if (typeof v.reason === 'string') said = v.reason;
  } catch {
    said = reason.slice(0, 200);
  }
  if (code === 1009) return 'The terminal closed: too much input at once';
  if (said) return `The terminal closed: ${said}`;
  return code === 1000 ? 'The terminal closed' : `The terminal closed (code ${code})`;
}
