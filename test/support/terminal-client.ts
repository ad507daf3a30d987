// A browser stand-in for the live terminal relay (api/terminal-socket.ts): a `ws` client that sends the
// session cookie (and an Origin when asked), collects the binary output as text, and reports the close
// frame. Used by the relay's integration test and by bench/terminal-relay.
import WebSocket from 'ws';

export interface TerminalClient {
  ws: WebSocket;
  /** Everything the terminal printed so far. */
  text(): string;
  /** Resolves once `needle` has been printed (after `from` characters); rejects after `timeoutMs`. */
  waitFor(needle: string, timeoutMs?: number, from?: number): Promise<void>;
  type(text: string): void;
  resize(cols: number, rows: number): void;
  /** The close frame (code and parsed reason). */
  closed: Promise<{ code: number; reason: any }>;
  /** Resolves when the socket is open; rejects when the upgrade was refused (HTTP status in the error). */
  opened: Promise<void>;
  close(): void;
}

export function terminalUrl(
  baseUrl: string,
  sessionId: string,
  size?: { cols: number; rows: number },
): string {
  const ws = baseUrl.replace(/^http/, 'ws');
  return `${ws}/api/remote/sessions/${sessionId}/terminal${size ? `?cols=${size.cols}&rows=${size.rows}` : ''}`;
}

export function openTerminal(
  url: string,
  opts: { token?: string; origin?: string; headers?: Record<string, string> } = {},
): TerminalClient {
  const ws = new WebSocket(url, {
    headers: {
      ...(opts.token ? { cookie: `session_token=${encodeURIComponent(opts.token)}` } : {}),
      ...opts.headers,
    },
    ...(opts.origin ? { origin: opts.origin } : {}),
  });
  let out = '';
  const watchers = new Set<() => void>();
  ws.on('message', (data, binary) => {
    if (!binary) return;
    out += Buffer.from(data as Buffer).toString('utf8');
    for (const w of watchers) w();
  });
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => {
      reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode }));
      res.resume();
    });
    ws.once('error', reject);
  });
  opened.catch(() => undefined);
  const closed = new Promise<{ code: number; reason: any }>((resolve) => {
    ws.once('close', (code, reason) => {
      let parsed: any = reason.toString();
      try {
        parsed = JSON.parse(parsed);
      } catch {}
      resolve({ code, reason: parsed });
    });
  });
  ws.on('error', () => undefined);
  return {
    ws,
    text: () => out,
    waitFor(needle, timeoutMs = 60_000, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (out.indexOf(needle, from) >= 0) {
            watchers.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(
            new Error(
              `timed out waiting for ${JSON.stringify(needle)}; got ${JSON.stringify(out.slice(-300))}`,
            ),
          );
        }, timeoutMs);
        watchers.add(check);
        check();
      });
    },
    type(text) {
      ws.send(Buffer.from(text, 'utf8'), { binary: true });
    },
    resize(cols, rows) {
      ws.send(JSON.stringify({ type: 'resize', cols, rows }));
    },
    closed,
    opened,
    close: () => ws.close(1000),
  };
}
