// Which operations of the document each fuzzing role runs: those whose credential scheme the role
// holds (a session role: session and public operations; the agent: agent-token ones; ...; the
// anonymous caller: all of them), minus the few that cannot be fuzzed as they stand, each with its
// reason (EXCLUDED). Their behaviour is covered by the integration tests named in the reason.

export type Scheme = 'session' | 'agentToken' | 'proxyToken' | 'uploadKey' | 'anonymous';

export interface OpenApiDoc {
  paths: Record<
    string,
    Record<
      string,
      { operationId: string; security?: Record<string, unknown>[]; responses?: Record<string, unknown> }
    >
  >;
}

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  scheme: Scheme;
  /** 5xx statuses the document names for it: the spec reserves some routes (501 until built). */
  documentedServerErrors: number[];
}

const SCHEME_OF: Record<string, Scheme> = {
  sessionCookie: 'session',
  sessionBearer: 'session',
  sessionQuery: 'session',
  agentToken: 'agentToken',
  proxyToken: 'proxyToken',
  proxyTokenHeader: 'proxyToken',
  uploadKey: 'uploadKey',
};

/** `METHOD /path` -> why an authenticated role does not fuzz it (the anonymous caller still does). */
export const EXCLUDED: Record<string, string> = {
  'POST /api/auth/logout':
    "ends the caller's own session, so every later case of the role would be a 401 (auth-sessions.test.ts)",
  'DELETE /api/sso/session': "ends the caller's own session like logout (test/integration/sso)",
  'GET /api/alerts/stream':
    'an endless SSE stream: the answer never ends, so no check could read it (alerts-stream.test.ts)',
  'GET /api/remote/sessions/{id}/output/stream':
    'an endless SSE stream for a visible session (remote-e2e.test.ts)',
  'GET /api/autonomous/workflows/{id}/events/stream':
    'an endless SSE stream for a visible workflow (autonomous/api-stream.test.ts)',
};

/**
 * Long polls: `wait_ms` (up to 25 s) is how long the answer may take when nothing is queued. Most
 * cases draw a short wait (the rest of the body is still fuzzed); a drawn long one is given the time
 * its own contract allows instead of failing on the client's timeout.
 */
export const LONG_POLLS: Record<string, { timeoutSeconds: number }> = {
  'POST /api/remote/agent/message': { timeoutSeconds: 30 },
  'POST /api/remote/agent/terminals/{terminalId}': { timeoutSeconds: 30 },
};

const HTTP = new Set(['get', 'post', 'put', 'patch', 'delete']);

export function allOperations(doc: OpenApiDoc): Operation[] {
  const out: Operation[] = [];
  for (const [p, item] of Object.entries(doc.paths))
    for (const [m, op] of Object.entries(item)) {
      if (!HTTP.has(m)) continue;
      const schemes = new Set((op.security ?? []).flatMap((s) => Object.keys(s).map((k) => SCHEME_OF[k])));
      const scheme = [...schemes].find(Boolean) ?? 'anonymous';
      const documentedServerErrors = Object.keys(op.responses ?? {})
        .map(Number)
        .filter((s) => s === 501);
      out.push({
        method: m.toUpperCase(),
        path: p,
        operationId: op.operationId,
        scheme,
        documentedServerErrors,
      });
    }
  return out;
}

export function operationsFor(
  doc: OpenApiDoc,
  schemes: Scheme[],
  authenticated: boolean,
): { included: Operation[]; excluded: (Operation & { reason: string })[] } {
  const included: Operation[] = [];
  const excluded: (Operation & { reason: string })[] = [];
  for (const op of allOperations(doc)) {
    if (!schemes.includes(op.scheme)) continue;
    const reason = !authenticated ? undefined : EXCLUDED[`${op.method} ${op.path}`];
    if (reason) excluded.push({ ...op, reason });
    else included.push(op);
  }
  return { included, excluded };
}

/**
 * schemathesis.toml for one run: an operation that documents 501 (reserved by the spec, e.g. the
 * WebSocket agent transport) may answer it, every other 5xx stays a failure; path parameters are
 * drawn from the world's real identifiers half of the time (`ids`, by parameter name), generated
 * otherwise.
 */
export function schemathesisConfig(ops: Operation[], ids: Record<string, (string | number)[]> = {}): string {
  const lines: string[] = [];
  const params = Object.entries(ids).filter(([, v]) => v.length);
  for (const [name, values] of params)
    lines.push(`[dictionaries.${name}]`, `values = ${JSON.stringify([...new Set(values)])}`, '');
  if (params.length) {
    lines.push('[parameters]');
    for (const [name] of params)
      lines.push(`"path.${name}" = { dictionary = ${JSON.stringify(name)}, probability = 0.5 }`);
    lines.push('');
  }
  const polls = ops.filter((op) => LONG_POLLS[`${op.method} ${op.path}`]);
  if (polls.length) lines.push('[dictionaries.short_wait]', 'values = [0, 1, 50]', '');
  for (const op of polls)
    lines.push(
      '[[operations]]',
      `include-operation-id = ${JSON.stringify(op.operationId)}`,
      `request-timeout = ${LONG_POLLS[`${op.method} ${op.path}`]!.timeoutSeconds}`,
      'parameters = { "body.wait_ms" = { dictionary = "short_wait", probability = 0.95 } }',
      '',
    );
  for (const op of ops)
    if (op.documentedServerErrors.length)
      lines.push(
        '[[operations]]',
        `include-operation-id = ${JSON.stringify(op.operationId)}`,
        `checks.not_a_server_error.expected-statuses = ${JSON.stringify(['2xx', '3xx', '4xx', ...op.documentedServerErrors.map(String)])}`,
        '',
      );
  return lines.join('\n');
}
