// HTTP side of PROTOCOL.md: registration, the polling endpoint and the WebSocket probe.
// Uses only global fetch and node:http(s) so the agent runs on a bare Node 18.
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { MessageRequest, MessageResponse, RegisterRequest, RegisterResponse } from './protocol.ts';

/** The server rejected our agent token: the machine was deleted or the token revoked. */
export class AuthRejectedError extends Error {}

/** Anything worth retrying: network failure, timeout, 5xx, unexpected body. */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface JsonResult {
  status: number;
  body: unknown;
}

/** POST JSON with a hard timeout; an outer signal (agent shutdown) also cancels it. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<JsonResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
  // AbortSignal.any is Node 20+; forward by hand for Node 18.
  const forward = (): void => controller.abort(new Error('agent is stopping'));
  if (signal?.aborted) forward();
  signal?.addEventListener('abort', forward, { once: true });
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    const text = await res.text();
    let parsed: unknown = null;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = { error: text.slice(0, 200) };
      }
    }
    return { status: res.status, body: parsed };
  } catch (err) {
    const reason = controller.signal.aborted ? controller.signal.reason : err;
    throw new TransportError(
      `POST ${new URL(url).pathname} failed: ${(reason as Error)?.message ?? String(reason)}`,
    );
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', forward);
  }
}

export function errorText(body: unknown): string {
  if (body && typeof body === 'object' && 'error' in body) {
    const e = (body as { error: unknown }).error;
    if (typeof e === 'string') return e;
    if (e && typeof e === 'object' && 'message' in e) return String((e as { message: unknown }).message);
  }
  return '';
}

export class AgentTransport {
  constructor(
    private readonly serverUrl: string,
    private readonly agentToken: string,
    private readonly machineId: string,
  ) {}

  private get headers(): Record<string, string> {
    return { authorization: `Bearer ${this.agentToken}`, 'x-machine-id': this.machineId };
  }

  /** One call of `POST /api/remote/agent/message` (long poll when wait_ms > 0). */
  async message(req: MessageRequest, signal?: AbortSignal): Promise<MessageResponse> {
    // The server may hold the request for wait_ms; allow for slow networks on top of that.
    const timeoutMs = req.wait_ms + 15000;
    const { status, body } = await postJson(
      `${this.serverUrl}/api/remote/agent/message`,
      req,
      this.headers,
      timeoutMs,
      signal,
    );
    if (status === 401) throw new AuthRejectedError(errorText(body) || 'agent token rejected');
    if (status !== 200) {
      throw new TransportError(
        `server answered ${status}${errorText(body) ? `: ${errorText(body)}` : ''}`,
        status,
      );
    }
    const commands = (body as { commands?: unknown } | null)?.commands;
    if (commands !== undefined && !Array.isArray(commands))
      throw new TransportError('malformed response: commands');
    return {
      commands: (commands as MessageResponse['commands']) ?? [],
      server_time: (body as MessageResponse)?.server_time,
    };
  }

  /**
   * Try `GET /api/remote/agent/ws` with a real upgrade handshake. Today the server answers 501 and
   * no frame format is agreed, so any answer means "use HTTP polling"; the result is only logged.
   */
  probeWebSocket(timeoutMs = 5000): Promise<{ upgraded: boolean; detail: string }> {
    const url = new URL(`${this.serverUrl}/api/remote/agent/ws`);
    const doRequest = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
      const req = doRequest(url, {
        method: 'GET',
        timeout: timeoutMs,
        headers: {
          ...this.headers,
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': randomBytes(16).toString('base64'),
        },
      });
      req.on('upgrade', (_res, socket) => {
        socket.destroy();
        resolve({ upgraded: true, detail: '101 Switching Protocols' });
      });
      req.on('response', (res) => {
        res.resume();
        resolve({ upgraded: false, detail: `HTTP ${res.statusCode}` });
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', (err) => resolve({ upgraded: false, detail: err.message }));
      req.end();
    });
  }
}

export async function postRegister(serverUrl: string, body: RegisterRequest): Promise<JsonResult> {
  return postJson(`${serverUrl}/api/remote/agent/register`, body, {}, 30000);
}

export function isRegisterResponse(body: unknown): body is RegisterResponse {
  return !!body && typeof body === 'object' && typeof (body as RegisterResponse).agent_token === 'string';
}
