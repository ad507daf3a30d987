/**
 * The model-proxy hot path: forwards one already-authorised call to the provider and streams the
 * answer back, reading token usage on the side. It knows nothing of tokens, tenants or the database;
 * the route in front of it decides who may call and which key and base URL to use.
 *
 * Shape kept deliberately close to the thinnest Node pass-through (bench/proxy/passthrough.ts):
 * node:http(s) with keep-alive agents, both bodies piped (never buffered), so the proxy adds as little
 * latency as possible and backpressure flows end to end.
 *
 * Mount it before any body parser: it reads the raw request stream.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { KeyProvider } from '../../domain/key-providers.ts';
import { classifyProviderError, type ProviderErrorClass } from '../../domain/proxy/provider-errors.ts';
import { addStreamUsageOption } from '../../domain/proxy/stream-usage-option.ts';
import { estimatedUsage } from '../../domain/usage/estimate.ts';
import { type Usage, type UsageResult, usageMissing, usageOk } from '../../domain/usage/usage.ts';
import { createUsageTap } from '../../domain/usage/usage-tap.ts';
import { detectWireFormat } from '../../domain/usage/wire-format.ts';
import type { WireFormat } from '../../domain/usage/wire-format-name.ts';
import type { EgressGuard } from '../../services/egress/guard.ts';
import { decodingUsageTap, type MaybeAsyncUsageTap } from './decoding-usage-tap.ts';
import { requestHeadersForUpstream, responseHeadersForClient } from './forwarded-headers.ts';
import { relayProviderError } from './provider-error-relay.ts';
import { sendProxyError } from './proxy-error.ts';
import { RequestBodyKeeper, readRequestBody, usageChunkStripper } from './stream-usage-rewrite.ts';
import { buildUpstreamUrl, type UpstreamTarget, UpstreamUrlError } from './upstream-url.ts';

/** Idle time without any upstream bytes before the call is given up (the spec's ingress timeout). */
const DEFAULT_IDLE_TIMEOUT_MS = 300_000;
/**
 * Idle keep-alive sockets are closed after this long, below typical provider idle timeouts (60 s+),
 * so that a reused socket is rarely one the provider is closing at that moment.
 */
const FREE_SOCKET_TIMEOUT_MS = 30_000;

/** Shown to the caller; the host and the reason are in the proxy's log (upstream_error EGRESS_DENIED). */
const EGRESS_DENIED_MESSAGE =
  "The stored key's base URL points to an address that keys stored by a tenant administrator may not reach";

const agents = {
  'http:': new http.Agent({ keepAlive: true, scheduling: 'lifo', timeout: FREE_SOCKET_TIMEOUT_MS }),
  'https:': new https.Agent({ keepAlive: true, scheduling: 'lifo', timeout: FREE_SOCKET_TIMEOUT_MS }),
};

export interface ForwardOptions {
  req: IncomingMessage;
  res: ServerResponse;
  /** Provider base URL, e.g. `https://api.openai.com/v1` (from the stored key's base_url). */
  upstreamBase: string;
  /** Path below the proxy prefix, with the query string, as the caller sent it. */
  path: string;
  /** Headers that authenticate to the provider, see providerAuthHeaders. */
  providerAuth: Record<string, string>;
  provider: KeyProvider;
  /** Usage format of the call; detected from provider and path when undefined (the usual case). */
  wireFormat?: WireFormat | null;
  /**
   * An OpenAI-format chat-completions endpoint: the body is read whole and a streamed call gets
   * `stream_options.include_usage`; what that adds is stripped from the answer unless the caller
   * asked for it (stream-usage-rewrite.ts).
   */
  addsStreamUsage?: boolean;
  /**
   * The request body, already read whole by the route (the content filter checks the prompt before
   * anything reaches the provider): sent from this buffer, the request stream is not read again.
   */
  heldBody?: Buffer;
  /** heldBody's JSON parse when the route made one (undefined: not JSON), so it is not parsed twice. */
  heldJson?: unknown;
  /**
   * Set for keys written by a tenant administrator: the connection goes through this guard's agents,
   * whose DNS step refuses loopback/private/metadata addresses and pins the checked address
   * (services/egress/guard.ts). A refusal answers 403 `egress_denied`. Unset: no extra work at all.
   */
  egress?: EgressGuard;
  /** Cancels the call (for example when the session is revoked mid-stream). */
  signal?: AbortSignal;
  /** Give up when the provider sends nothing for this long. Default 300 s. */
  idleTimeoutMs?: number;
  /**
   * A provider error's class (domain/proxy/provider-errors.ts), before the error reaches the caller:
   * the relay waits for the returned promise (bounded, provider-error-relay.ts). Must not reject.
   */
  onProviderError?: (cls: ProviderErrorClass) => Promise<void>;
  /** Called once, after the response is over. Must not throw (an exception is reported as a warning). */
  onDone?: (result: ForwardResult) => void;
}

export interface ForwardResult {
  /** Status sent to the caller: the provider's, or the proxy's own error status; 0 if none was sent. */
  status: number;
  /** Token usage read from the response; null when it could not be read (see usageError). */
  usage: Usage | null;
  /** Why usage is null. */
  usageError?: string;
  /** The response ended before the provider's final usage report; usage is a lower bound. */
  usagePartial: boolean;
  /** Usage format of the endpoint; null for endpoints that report no usage (model lists, ...). */
  wireFormat: WireFormat | null;
  /** The caller disconnected, or the call was cancelled through `signal`, before the response ended. */
  aborted: boolean;
  /** The provider could not be reached, failed mid-response or timed out (an error code, no details). */
  upstreamError?: string;
  /** Response body bytes passed to the caller. */
  bytes: number;
  /** The class of a relayed provider error (status >= 400), from its envelope (provider-errors.ts). */
  providerError?: ProviderErrorClass;
}

export function forwardToProvider(options: ForwardOptions): Promise<ForwardResult> {
  return new Promise((resolve) => new ForwardedCall(options, resolve).start());
}

class ForwardedCall {
  private readonly wireFormat: WireFormat | null;
  private status = 0;
  private bytes = 0;
  private aborted = false;
  private upstreamError: string | undefined;
  private providerError: ProviderErrorClass | undefined;
  private tap: MaybeAsyncUsageTap | undefined;
  private noUsageReason: string;
  private upstream: http.ClientRequest | undefined;
  private settled = false;
  /** The request body, kept for a prompt estimate when a stream ends without usage. */
  private requestBody: RequestBodyKeeper | undefined;
  /** include_usage was added for the caller: strip it from the answer. */
  private stripUsage = false;

  constructor(
    private readonly options: ForwardOptions,
    private readonly resolve: (result: ForwardResult) => void,
  ) {
    this.wireFormat =
      options.wireFormat !== undefined
        ? options.wireFormat
        : detectWireFormat(options.provider, options.path);
    this.noUsageReason = this.wireFormat === null ? 'endpoint reports no usage' : 'request was not forwarded';
  }

  start(): void {
    const { req, res, signal } = this.options;
    // Every ending (normal, caller gone, upstream failure, our own error reply) passes through here.
    res.on('close', this.onClientClose);
    // A caller that disconnects mid-upload makes req emit 'error'; the 'close' above handles it.
    req.on('error', noop);

    if (res.destroyed || res.closed) {
      this.aborted = true;
      this.finish();
      return;
    }
    if (signal?.aborted) {
      this.onCancel();
      return;
    }
    signal?.addEventListener('abort', this.onCancel, { once: true });

    let target: UpstreamTarget;
    try {
      target = buildUpstreamUrl(this.options.upstreamBase, this.options.path);
    } catch (error) {
      if (!(error instanceof UpstreamUrlError)) throw error;
      if (error.kind === 'bad_base') this.reply(500, 'config_error', error.message);
      else this.reply(400, 'proxy_error', error.message);
      return;
    }
    const egress = this.options.egress;
    if (egress !== undefined && egress.refusal(target.hostname) !== null) {
      this.upstreamError = 'EGRESS_DENIED';
      this.reply(403, 'egress_denied', EGRESS_DENIED_MESSAGE);
      return;
    }
    if (this.options.heldBody === undefined && req.readableEnded && hasBody(req)) {
      // A body parser ran first; forwarding now would silently send an empty body.
      this.reply(500, 'proxy_error', 'Request body was consumed before the proxy could forward it');
      return;
    }

    const client = target.protocol === 'https:' ? https : http;
    const upstream = client.request({
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      path: target.path,
      method: req.method,
      headers: requestHeadersForUpstream(req.rawHeaders, this.options.providerAuth),
      agent: (egress?.agents ?? agents)[target.protocol],
    });
    this.upstream = upstream;
    upstream.setTimeout(this.options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, () => {
      upstream.destroy(Object.assign(new Error('upstream idle timeout'), { code: 'ETIMEDOUT' }));
    });
    upstream.on('response', this.onUpstreamResponse);
    upstream.on('error', this.onUpstreamError);
    this.sendBody(upstream);
  }

  /** Sends the request body: piped as it comes, or read whole first for a chat-completions rewrite. */
  private sendBody(upstream: http.ClientRequest): void {
    const { req, heldBody } = this.options;
    if (this.wireFormat !== null) {
      const keeper = new RequestBodyKeeper();
      this.requestBody = keeper;
      if (!this.options.addsStreamUsage && heldBody === undefined)
        req.on('data', (chunk: Buffer) => keeper.keep(chunk));
    }
    if (heldBody !== undefined) {
      this.sendHeldBody(upstream, heldBody, { parsed: this.options.heldJson });
      return;
    }
    if (!this.options.addsStreamUsage) {
      req.pipe(upstream);
      return;
    }
    void readRequestBody(req).then((held) => {
      if (upstream.destroyed || this.settled) return;
      if (!held.ok) {
        upstream.destroy();
        if (held.reason === 'too_large')
          this.reply(413, 'proxy_error', 'Request body too large (limit 50 MB)');
        return;
      }
      this.sendHeldBody(upstream, held.body);
    });
  }

  /** Sends a body read whole (with include_usage added to a chat-completions stream request). */
  private sendHeldBody(upstream: http.ClientRequest, held: Buffer, known?: { parsed: unknown }): void {
    this.requestBody?.keep(held);
    let body = held;
    if (this.options.addsStreamUsage) {
      const rewrite = addStreamUsageOption(held, known);
      if (rewrite.kind === 'rewritten') {
        body = rewrite.body;
        this.stripUsage = true;
        upstream.setHeader('content-length', body.length);
      }
    }
    upstream.end(body);
  }

  private onUpstreamResponse = (upstreamRes: IncomingMessage): void => {
    const { res } = this.options;
    if (res.destroyed) {
      upstreamRes.destroy();
      return;
    }
    const status = upstreamRes.statusCode ?? 502;
    if (status >= 400) {
      // Error bodies are small and may echo the key: buffered, scrubbed, then relayed.
      this.status = status;
      relayProviderError(upstreamRes, res, status, this.options.providerAuth, {
        onBytes: (n) => {
          this.bytes += n;
        },
        onFailure: (code) => {
          this.upstreamError = code;
          this.reply(
            502,
            'upstream_error',
            'The model provider sent an error response the proxy cannot relay',
          );
        },
        beforeRelay: (body) => {
          this.providerError = classifyProviderError(status, body);
          return this.options.onProviderError?.(this.providerError);
        },
      });
      if (this.wireFormat !== null) this.noUsageReason = `provider answered ${status}`;
      return;
    }
    // Only an uncompressed event stream can be filtered (the proxy asks for identity encoding).
    const strip =
      this.stripUsage &&
      (rawHeader(upstreamRes.rawHeaders, 'content-type') ?? '').includes('text/event-stream') &&
      (rawHeader(upstreamRes.rawHeaders, 'content-encoding') ?? 'identity') === 'identity';
    try {
      const headers = responseHeadersForClient(upstreamRes.rawHeaders);
      res.writeHead(status, strip ? withoutContentLength(headers) : headers);
    } catch {
      // A header Node refuses to send on (writeHead validates names and values); never crash on it.
      upstreamRes.destroy();
      this.upstreamError = 'EBADHEADER';
      this.reply(502, 'upstream_error', 'The model provider sent a response the proxy cannot relay');
      return;
    }
    this.status = status;

    if (this.wireFormat !== null && this.status >= 200 && this.status < 300) {
      const raw = upstreamRes.rawHeaders;
      this.tap = decodingUsageTap(
        createUsageTap(this.wireFormat, rawHeader(raw, 'content-type')),
        rawHeader(raw, 'content-encoding'),
      );
    } else if (this.wireFormat !== null) {
      this.noUsageReason = `provider answered ${this.status}`;
    }

    upstreamRes.on('data', (chunk: Buffer) => {
      this.bytes += chunk.length;
      if (this.tap === undefined) return;
      try {
        this.tap.write(chunk);
      } catch {
        // Usage reading must never break the stream it watches.
        this.tap = undefined;
        this.noUsageReason = 'usage reader failed';
      }
    });
    upstreamRes.on('error', noop); // reported through 'close' below
    upstreamRes.on('close', () => {
      if (upstreamRes.complete || this.settled || this.aborted) return;
      this.upstreamError = 'ECONNRESET';
      res.destroy();
    });
    if (strip) upstreamRes.pipe(usageChunkStripper()).pipe(res);
    else upstreamRes.pipe(res);
  };

  private onUpstreamError = (error: Error & { code?: string }): void => {
    // Errors caused by our own abort (caller gone, cancelled) are expected.
    if (this.settled || this.aborted) return;
    this.upstreamError = error.code ?? 'UNKNOWN';
    if (this.upstreamError === 'EGRESS_DENIED' && !this.options.res.headersSent) {
      this.reply(403, 'egress_denied', EGRESS_DENIED_MESSAGE);
      return;
    }
    if (this.options.res.headersSent) {
      this.options.res.destroy();
      return;
    }
    const timedOut = this.upstreamError === 'ETIMEDOUT';
    this.reply(
      timedOut ? 504 : 502,
      'upstream_error',
      timedOut
        ? 'The model provider did not respond in time'
        : `Could not reach the model provider (${this.upstreamError})`,
    );
  };

  private onCancel = (): void => {
    this.aborted = true;
    this.upstream?.destroy();
    this.reply(503, 'proxy_error', 'The proxy cancelled the request');
  };

  private onClientClose = (): void => {
    const { res } = this.options;
    if (!res.writableFinished && this.upstreamError === undefined) this.aborted = true;
    // Stop the provider from generating (and billing) tokens nobody will read.
    if (this.aborted || this.upstreamError !== undefined) this.upstream?.destroy();
    this.finish();
  };

  private reply(status: number, type: Parameters<typeof sendProxyError>[2], message: string): void {
    if (!this.options.res.headersSent) this.status = status;
    sendProxyError(this.options.res, status, type, message);
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    this.options.signal?.removeEventListener('abort', this.onCancel);
    if (this.tap === undefined) {
      this.complete(usageMissing(this.noUsageReason));
      return;
    }
    let ended: UsageResult | Promise<UsageResult>;
    try {
      ended = this.tap.end();
    } catch {
      ended = usageMissing('usage reader failed');
    }
    // Only a compressed body makes this asynchronous; the common path stays synchronous.
    if (ended instanceof Promise) {
      ended.then(
        (usage) => this.complete(usage),
        () => this.complete(usageMissing('usage reader failed')),
      );
    } else {
      this.complete(ended);
    }
  }

  private complete(ended: UsageResult): void {
    // A stream that ended without usage is estimated from its text and the request's (estimate.ts).
    const usage =
      ended.usage === null && ended.outputChars !== undefined && this.requestBody !== undefined
        ? usageOk(estimatedUsage(this.requestBody.promptChars(), ended.outputChars), this.aborted)
        : ended;
    const result: ForwardResult = {
      status: this.status,
      usage: usage.usage,
      usagePartial: usage.usage !== null && usage.partial,
      wireFormat: this.wireFormat,
      aborted: this.aborted,
      bytes: this.bytes,
    };
    if (usage.usage === null) result.usageError = usage.reason;
    if (this.upstreamError !== undefined) result.upstreamError = this.upstreamError;
    if (this.providerError !== undefined) result.providerError = this.providerError;

    this.resolve(result);
    try {
      this.options.onDone?.(result);
    } catch (error) {
      process.emitWarning(`llm-proxy onDone callback threw: ${(error as Error)?.message ?? 'unknown error'}`);
    }
  }
}

function noop(): void {}

/** A flat name/value header list without content-length (the body is rewritten on the way). */
function withoutContentLength(headers: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i].toLowerCase() !== 'content-length') out.push(headers[i], headers[i + 1]);
  }
  return out;
}

function hasBody(req: IncomingMessage): boolean {
  const length = rawHeader(req.rawHeaders, 'content-length');
  return (
    (length !== undefined && length !== '0') || rawHeader(req.rawHeaders, 'transfer-encoding') !== undefined
  );
}

/** First value of a header in a raw name/value list (avoids building the lazy headers object). */
function rawHeader(raw: readonly string[], name: string): string | undefined {
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === name.length && raw[i].toLowerCase() === name) return raw[i + 1];
  }
  return undefined;
}
