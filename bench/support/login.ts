// Logging in over HTTP, as the benchmarks' clients do: the session cookie (for fetch and autocannon),
// the raw session token (socket.io's auth) and the user the login answered with.
export interface LoggedIn {
  /** `session_token=...`, ready for a cookie header. */
  cookie: string;
  token: string;
  user: { id: number };
}

export async function login(url: string, username: string, password: string): Promise<LoggedIn> {
  const res = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  if (res.status !== 200) throw new Error(`login ${username}: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { user: { id: number } };
  const cookie = res.headers
    .getSetCookie()
    .find((c) => c.startsWith('session_token='))!
    .split(';')[0]!;
  return { cookie, token: decodeURIComponent(cookie.slice('session_token='.length)), user: body.user };
}
