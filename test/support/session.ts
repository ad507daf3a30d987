// Logging in over real HTTP in tests: returns the session token (from Set-Cookie) and ready headers.
import assert from 'node:assert/strict';

export interface Session {
  token: string;
  /** `Authorization: Bearer <token>` headers. */
  headers: Record<string, string>;
  user: {
    id: number;
    username: string;
    role: string;
    tenant_id: number | null;
    must_change_password: boolean;
  };
  setCookie: string;
}

export function sessionCookieOf(res: Response): string | undefined {
  return res.headers.getSetCookie().find((c) => c.startsWith('session_token='));
}

export async function login(url: string, username: string, password: string): Promise<Session> {
  const res = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  const body = (await res.json()) as any;
  assert.equal(res.status, 200, `login ${username}: ${res.status} ${JSON.stringify(body)}`);
  const setCookie = sessionCookieOf(res);
  assert.ok(setCookie, 'login sets the session_token cookie');
  const token = decodeURIComponent(setCookie.split(';')[0]!.slice('session_token='.length));
  return { token, headers: { authorization: `Bearer ${token}` }, user: body.user, setCookie };
}

/** fetch with JSON in and out; `auth` is a Session or raw headers. */
export async function api(
  url: string,
  method: string,
  path: string,
  opts: { auth?: Session | Record<string, string>; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; res: Response }> {
  const authHeaders = opts.auth
    ? 'headers' in opts.auth && typeof opts.auth.headers === 'object'
      ? (opts.auth as Session).headers
      : (opts.auth as Record<string, string>)
    : {};
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...authHeaders,
      ...opts.headers,
    },
    body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {}
  return { status: res.status, body, res };
}
