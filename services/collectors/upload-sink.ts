// The sink of `npm run collect`: posts collected messages to a server's POST /api/upload/batch with the
// header X-Upload-Auth: a personal upload token or the shared key (docs/integrators/uploads.md "Uploading usage and messages"). A batch whose JSON passes MAX_BODY_BYTES
// is split in two (the server refuses bodies over 50 MB). The server's refusals that a retry cannot fix
// (401, 403, 503, an unreachable server, any other non-2xx) end the run with an UploadError saying
// what to do; rows the server rejects one by one (207/400) are counted, not fatal.
import type { MessageSink, OutgoingMessage, SinkOutcome } from './collect-source.ts';

const MAX_BODY_BYTES = 40 * 1024 * 1024;

export class UploadError extends Error {}

function refusal(status: number, error: string, server: string): UploadError {
  if (status === 401)
    return new UploadError(
      `The server refused the upload (401): no upload key was sent, or the upload token is revoked or expired. ${error}`,
    );
  if (status === 403)
    return new UploadError(
      `The server refused the upload key (403): check --upload-token or --upload-key. ${error}`,
    );
  if (status === 503)
    return new UploadError(
      `The server does not accept uploads (503): ${error || 'its SVC_UPLOAD_AUTH_KEY is unset'}`,
    );
  return new UploadError(`Upload to ${server} failed with HTTP ${status}: ${error}`);
}

export function uploadSink(opts: {
  server: string;
  uploadKey: string;
  fetchImpl?: typeof fetch;
}): MessageSink {
  const url = `${opts.server.replace(/\/+$/, '')}/api/upload/batch`;
  const doFetch = opts.fetchImpl ?? fetch;

  async function post(messages: OutgoingMessage[]): Promise<SinkOutcome> {
    const body = JSON.stringify({ messages });
    if (Buffer.byteLength(body) > MAX_BODY_BYTES && messages.length > 1) {
      const half = Math.ceil(messages.length / 2);
      const a = await post(messages.slice(0, half));
      const b = await post(messages.slice(half));
      return {
        stored: a.stored + b.stored,
        duplicates: a.duplicates + b.duplicates,
        rejected: a.rejected + b.rejected,
      };
    }
    let res: Response;
    try {
      res = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-upload-auth': opts.uploadKey },
        body,
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new UploadError(
        `Cannot reach the server at ${opts.server}: ${cause?.code ?? cause?.message ?? (err as Error).message}`,
      );
    }
    const text = await res.text();
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {}
    const list = parsed?.messages;
    if ((res.status === 200 || res.status === 207) && list && typeof list === 'object')
      return {
        stored: Number(list.stored ?? 0),
        duplicates: Number(list.duplicates ?? 0),
        rejected: Array.isArray(list.rejected) ? list.rejected.length : 0,
      };
    // 400 "no valid rows": every message of the batch was refused; nothing was stored.
    if (res.status === 400 && parsed?.messages)
      return { stored: 0, duplicates: 0, rejected: messages.length };
    throw refusal(
      res.status,
      typeof parsed?.error === 'string' ? parsed.error : text.slice(0, 200),
      opts.server,
    );
  }
  return post;
}
