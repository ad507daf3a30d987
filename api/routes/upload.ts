// POST /api/upload/usage, /api/upload/messages and /api/upload/batch (spec document 2, "Upload, fetch
// and reports"; the body shapes beyond the spec's table are chosen here and documented in the README
// section "Uploading usage and messages"):
//
//   auth: header X-Upload-Auth = settings.SVC_UPLOAD_AUTH_KEY (compared in constant time).
//         503 when the setting is unset (uploads disabled), 401 without the header, 403 wrong value.
//   /api/upload/usage     {date, tool_name, host_name?, tokens_used?, input_tokens?, output_tokens?,
//                          cache_tokens?, request_count?, models_used?}: one day's usage of a tool on a
//                          host; a newer report for the same day, tool and host replaces the older one.
//   /api/upload/messages  {date, tool_name, host_name?, messages: [{message_id, role, content?,
//                          tokens_used?, input_tokens?, output_tokens?, timestamp?, model?, ...}]}
//   /api/upload/batch     {messages?: [{date?, tool_name, host_name?, message_id, role, ...}],
//                          usage?: [usage reports as above]}: rows of any day, tool and host, each
//                          carrying its own (a message's date defaults to the UTC day of its timestamp).
//   Answer per list of rows (the batch answers {success, messages: {...}, usage: {...}}):
//   200 {success: true, received, stored, duplicates, rejected: []}     every row valid
//   207 {success: false, received, stored, duplicates, accepted: [index...], rejected: [{index, field, error}]}
//   400 {error, received, stored: 0, rejected}   no row valid (a bad envelope: {error} naming the field)
// `stored` counts rows that changed the figures now, `duplicates` valid rows that changed nothing
// (stored before), `accepted` lists the indexes of every valid row.
import { createHash, timingSafeEqual } from 'node:crypto';
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import {
  BadRequestError,
  ForbiddenError,
  ServiceUnavailableError,
  UnauthorizedError,
} from '../../domain/errors.ts';
import {
  isCalendarDate,
  judgeRows,
  type MessageDefaults,
  type RowError,
  readMessage,
  readUsage,
} from '../../domain/usage/ingest-rows.ts';
import { type IngestOutcome, ingestService } from '../../services/usage/ingest.ts';
import type { AppDeps } from '../deps.ts';
import { parseInput } from '../middleware/validate.ts';

const calendarDate = z.string().refine(isCalendarDate, 'must be a date YYYY-MM-DD');
const rows = z.array(z.unknown(), 'must be a list of rows').min(1, 'must not be empty');

const messagesBody = z.object({
  date: calendarDate,
  tool_name: z.string().min(1, 'is required').max(100),
  host_name: z.string().min(1).max(255).optional(),
  messages: rows,
});

const batchBody = z
  .object({
    messages: z.array(z.unknown(), 'must be a list of rows').optional(),
    usage: z.array(z.unknown(), 'must be a list of rows').optional(),
  })
  .refine(
    (b) => (b.messages?.length ?? 0) + (b.usage?.length ?? 0) > 0,
    'messages or usage rows are required',
  );

const digest = (value: string) => createHash('sha256').update(value).digest();

/** The upload key check: 503 unset, 401 missing, 403 wrong; constant time in the key's content. */
function checkUploadAuth(req: Request, key: string | undefined) {
  if (!key)
    throw new ServiceUnavailableError(
      'Uploads are disabled: the server has no upload key (set SVC_UPLOAD_AUTH_KEY)',
    );
  const sent = req.get('x-upload-auth');
  if (sent === undefined || sent === '') throw new UnauthorizedError('X-Upload-Auth header required');
  if (!timingSafeEqual(digest(sent), digest(key))) throw new ForbiddenError('Invalid upload key');
}

export function uploadRouter(deps: AppDeps): Router {
  const r = Router();
  const ingest = ingestService(deps);

  /** Judges the rows, stores the valid ones; the answer of one list. */
  async function store<T>(
    values: readonly unknown[],
    judge: (v: unknown) => { ok: true; row: T } | { ok: false; error: Omit<RowError, 'index'> },
    write: (rows: T[]) => Promise<IngestOutcome>,
  ) {
    const { valid, rejected } = judgeRows(values, judge);
    const received = values.length;
    const outcome = valid.length ? await write(valid.map((v) => v.row)) : { inserted: 0, duplicates: 0 };
    const figures = { received, stored: outcome.inserted, duplicates: outcome.duplicates };
    if (rejected.length === 0) return { valid: valid.length, body: { success: true, ...figures, rejected } };
    return {
      valid: valid.length,
      body: { success: false, ...figures, accepted: valid.map((v) => v.index), rejected },
    };
  }

  const storeMessages = (values: readonly unknown[], defaults: MessageDefaults) =>
    store(
      values,
      (v) => readMessage(v, defaults),
      (rows) => ingest.ingestMessages(rows),
    );
  const storeUsage = (values: readonly unknown[]) =>
    store(values, readUsage, (rows) => ingest.ingestUsage(rows));

  /** 200 every row valid, 400 none (nothing was written), 207 otherwise. */
  function answer(
    res: Response,
    parts: Array<{ valid: number; body: { success: boolean; received: number; rejected: RowError[] } }>,
    body: Record<string, unknown>,
  ) {
    const received = parts.reduce((a, p) => a + p.body.received, 0);
    const valid = parts.reduce((a, p) => a + p.valid, 0);
    if (valid === 0) {
      const rejected = parts.reduce((a, p) => a + p.body.rejected.length, 0);
      throw new BadRequestError(`No valid rows: ${rejected} of ${received} rejected`, { ...body, stored: 0 });
    }
    res.status(valid === received ? 200 : 207).json(body);
  }

  r.post('/api/upload/usage', async (req, res) => {
    checkUploadAuth(req, deps.settings.SVC_UPLOAD_AUTH_KEY);
    const out = await storeUsage([req.body ?? {}]);
    answer(res, [out], out.body);
  });

  r.post('/api/upload/messages', async (req, res) => {
    checkUploadAuth(req, deps.settings.SVC_UPLOAD_AUTH_KEY);
    const body = parseInput(messagesBody, req.body);
    const out = await storeMessages(body.messages, {
      date: body.date,
      toolName: body.tool_name,
      hostName: body.host_name,
    });
    answer(res, [out], out.body);
  });

  r.post('/api/upload/batch', async (req, res) => {
    checkUploadAuth(req, deps.settings.SVC_UPLOAD_AUTH_KEY);
    const body = parseInput(batchBody, req.body);
    const messages = await storeMessages(body.messages ?? [], {});
    const usage = await storeUsage(body.usage ?? []);
    answer(res, [messages, usage], {
      success: messages.body.success && usage.body.success,
      messages: messages.body,
      usage: usage.body,
    });
  });

  return r;
}
