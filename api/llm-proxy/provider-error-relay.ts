/**
 * Relays a provider's error response (status >= 400) to the caller after removing any echo of the
 * stored key (key-echo.ts). Error bodies are small, so this one path buffers instead of piping: the
 * body is read whole (bounded), decompressed if the provider compressed it anyway, scrubbed, and sent
 * with its own content-length. Success responses never come here and keep streaming untouched.
 *
 * `beforeRelay` sees the scrubbed body before the caller does, and the relay waits for it (at most
 * BEFORE_RELAY_WAIT_MS): whoever reads what it records after the caller got the error (the autonomous
 * runner reads the session's last provider error once its CLI exits) finds it already written.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import { responseHeadersForClient } from './forwarded-headers.ts';
import { removeKeyEchoes, secretsOf } from './key-echo.ts';

/** Larger error bodies are not relayed (502): no provider sends one, and it would sit in memory. */
const MAX_ERROR_BODY = 1 << 20;

/** Headers that describe the provider's framing of the body, which the relay re-frames. */
const REFRAMED = new Set(['content-length', 'content-encoding', 'transfer-encoding']);

/** How long an error response waits for `beforeRelay`: a slow store delays it, never withholds it. */
export const BEFORE_RELAY_WAIT_MS = 2000;

export function relayProviderError(
  upstreamRes: IncomingMessage,
  res: ServerResponse,
  status: number,
  providerAuth: Readonly<Record<string, string>>,
  on: {
    onBytes: (n: number) => void;
    onFailure: (code: string) => void;
    /** The body, decoded and scrubbed, before it is sent; the relay waits for a returned promise. */
    beforeRelay?: (body: Buffer) => Promise<void> | void;
  },
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let failed = false;
  const fail = (code: string) => {
    if (failed) return;
    failed = true;
    upstreamRes.destroy();
    on.onFailure(code);
  };

  upstreamRes.on('data', (chunk: Buffer) => {
    size += chunk.length;
    on.onBytes(chunk.length);
    if (size > MAX_ERROR_BODY) return fail('EBODYTOOLARGE');
    chunks.push(chunk);
  });
  upstreamRes.on('error', () => undefined); // reported through 'close'
  upstreamRes.on('close', () => {
    if (!upstreamRes.complete) fail('ECONNRESET');
  });
  upstreamRes.on('end', async () => {
    if (failed || res.destroyed) return;
    let body: Buffer;
    try {
      body = decode(Buffer.concat(chunks), header(upstreamRes, 'content-encoding'));
    } catch {
      return fail('EBADBODY');
    }
    const text = removeKeyEchoes(body.toString('utf8'), secretsOf(providerAuth));
    const out = Buffer.from(text, 'utf8');
    await waitBounded(on.beforeRelay?.(out));
    if (res.destroyed) return;
    const raw = responseHeadersForClient(upstreamRes.rawHeaders);
    const headers: string[] = [];
    for (let i = 0; i < raw.length; i += 2)
      if (!REFRAMED.has(raw[i]!.toLowerCase())) headers.push(raw[i]!, raw[i + 1]!);
    headers.push('content-length', String(out.length));
    try {
      res.writeHead(status, headers);
    } catch {
      return fail('EBADHEADER');
    }
    res.end(out);
  });
}

/** Waits for `p` (its failure is the hook's own business), at most BEFORE_RELAY_WAIT_MS. */
async function waitBounded(p: Promise<void> | void): Promise<void> {
  if (p === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    p.catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, BEFORE_RELAY_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
}

function header(msg: IncomingMessage, name: string): string | undefined {
  const v = msg.headers[name];
  return typeof v === 'string' ? v.trim().toLowerCase() : undefined;
}

function decode(body: Buffer, encoding: string | undefined): Buffer {
  const opts = { maxOutputLength: MAX_ERROR_BODY };
  switch (encoding) {
    case undefined:
    case '':
    case 'identity':
      return body;
    case 'gzip':
    case 'x-gzip':
      return zlib.gunzipSync(body, opts);
    case 'deflate':
      return zlib.inflateSync(body, opts);
    case 'br':
      return zlib.brotliDecompressSync(body, opts);
    default:
      throw new Error(`unsupported content-encoding ${encoding}`);
  }
}
