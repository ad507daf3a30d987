// The one way pages talk to the API: same-origin fetch with the session cookie, JSON in and out.
// Failures become ApiError carrying the HTTP status and the API's `{error}` text in words.
// A 401 sends the browser to /login with a return path; a pending password change to /change-password.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown = undefined,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The path (with query) to come back to after login. */
export const currentPath = () => window.location.pathname + window.location.search;

export function loginPathFor(next: string): string {
  return next && next !== '/' && !next.startsWith('/login')
    ? `/login?next=${encodeURIComponent(next)}`
    : '/login';
}

/** Only same-site absolute paths are followed after login ("//host" and "/\\host" are refused). */
export function safeNext(raw: string | null | undefined): string {
  if (!raw?.startsWith('/') || raw.startsWith('//') || raw.startsWith('/\\')) return '/';
  return raw;
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined | null>;
  signal?: AbortSignal;
  /** Do not redirect to /login on 401 (the login form itself). */
  noRedirect?: boolean;
}

function withQuery(path: string, query: RequestOptions['query']): string {
  if (!query) return path;
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v != null && v !== '') qs.set(k, String(v));
  const s = qs.toString();
  return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
}

function messageOf(status: number, body: unknown): string {
  if (body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string')
    return (body as { error: string }).error;
  if (status === 0) return 'The server could not be reached';
  return `The server answered ${status}`;
}

export async function request<T = any>(path: string, opts: RequestOptions = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(withQuery(path, opts.query), {
      method: opts.method ?? 'GET',
      credentials: 'same-origin',
      headers: {
        accept: 'application/json',
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
      signal: opts.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, messageOf(0, undefined));
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const message = messageOf(res.status, body);
    if (res.status === 401 && !opts.noRedirect && !window.location.pathname.startsWith('/login'))
      window.location.assign(loginPathFor(currentPath()));
    else if (res.status === 403 && /password change required/i.test(message))
      window.location.assign('/change-password');
    throw new ApiError(res.status, message, body);
  }
  return body as T;
}

export const api = {
  get: <T = any>(path: string, opts: Omit<RequestOptions, 'method' | 'body'> = {}) => request<T>(path, opts),
  post: <T = any>(path: string, body?: unknown, opts: Omit<RequestOptions, 'method' | 'body'> = {}) =>
    request<T>(path, { ...opts, method: 'POST', body: body ?? {} }),
  put: <T = any>(path: string, body?: unknown, opts: Omit<RequestOptions, 'method' | 'body'> = {}) =>
    request<T>(path, { ...opts, method: 'PUT', body: body ?? {} }),
  patch: <T = any>(path: string, body?: unknown, opts: Omit<RequestOptions, 'method' | 'body'> = {}) =>
    request<T>(path, { ...opts, method: 'PATCH', body: body ?? {} }),
  del: <T = any>(path: string, opts: Omit<RequestOptions, 'method' | 'body'> = {}) =>
    request<T>(path, { ...opts, method: 'DELETE' }),
};

/** An error of any kind in words, for ErrorBox and form messages. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

export interface StreamHandlers {
  /** Named SSE events ("event: x") to listen for; the default "message" event goes to onMessage. */
  events?: Record<string, (data: any, ev: MessageEvent) => void>;
  onMessage?: (data: any, ev: MessageEvent) => void;
  /** The connection failed: `readyState` EventSource.CONNECTING (reconnecting) or CLOSED (given up). */
  onError?: (ev: Event, readyState: number) => void;
  onOpen?: () => void;
}

/**
 * Opens a same-origin Server-Sent Events stream (the session cookie goes along). JSON data is parsed,
 * anything else is passed as text. Returns a function that closes the stream (call it on unmount).
 */
export function openStream(path: string, handlers: StreamHandlers, query?: RequestOptions['query']) {
  const es = new EventSource(withQuery(path, query), { withCredentials: true });
  const parse = (ev: MessageEvent) => {
    try {
      return JSON.parse(ev.data);
    } catch {
      return ev.data;
    }
  };
  if (handlers.onMessage) es.onmessage = (ev) => handlers.onMessage!(parse(ev), ev);
  // A server's named `error` event and the EventSource's own connection errors share the type
  // "error": the first is a MessageEvent (it has data) and goes only to events.error, the second is a
  // plain Event and goes only to onError with the connection's readyState (CONNECTING: the browser
  // reconnects; CLOSED: it gave up).
  const isServerEvent = (ev: Event): ev is MessageEvent => ev instanceof MessageEvent;
  for (const [name, fn] of Object.entries(handlers.events ?? {}))
    es.addEventListener(name, (ev) => {
      if (isServerEvent(ev)) fn(parse(ev), ev);
    });
  const onError = handlers.onError;
  if (onError)
    es.onerror = (ev) => {
      if (!isServerEvent(ev)) onError(ev, es.readyState);
    };
  if (handlers.onOpen) es.onopen = handlers.onOpen;
  return () => es.close();
}
