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
//
// /usage is parsed by the app's JSON body parser and answered here. /messages and /batch read their
// body as a stream (api/routes/upload-stream.ts, mounted before the JSON parser) and store rows in
// chunks while the body arrives; they share this module's upload key check and answers (RowList).
import { createHash, timingSafeEqual } from 'node:crypto';
import { type Request, type Response, Router } from 'express';
import {
  BadRequestError,
  ForbiddenError,
  ServiceUnavailableError,
  UnauthorizedError,
} from '../../domain/errors.ts';
import { judgeRows, type RowError, type RowResult, readUsage } from '../../domain/usage/ingest-rows.ts';
import { CHUNK_ROWS, type IngestOutcome, ingestService } from '../../services/usage/ingest.ts';
import type { AppDeps } from '../deps.ts';
import { endpoint } from '../openapi/endpoint.ts';
import { ROWS_JUDGED, rowListAnswer, usageRowShape } from './upload-shapes.ts';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** The upload key check: 503 unset, 401 missing, 403 wrong; constant time in the key's content. */
export function checkUploadAuth(req: Request, key: string | undefined) {
  if (!key)
    throw new ServiceUnavailableError(
      'Uploads are disabled: the server has no upload key (set SVC_UPLOAD_AUTH_KEY)',
    );
  const sent = req.get('x-upload-auth');
  if (sent === undefined || sent === '') throw new UnauthorizedError('X-Upload-Auth header required');
  if (!timingSafeEqual(digest(sent), digest(key))) throw new ForbiddenError('Invalid upload key');
}

/**
 * One list of rows of a request, taken in as it arrives: `add` holds a row, `flush` judges held rows
 * (indexes count from the list's first row) and stores the valid ones, at most CHUNK_ROWS per call,
 * so a call is one transaction. `body()` is the list's answer.
 */
export class RowList<T> {
  /** Rows judged so far (and stored, when valid): the first `received` rows of the list are done. */
  received = 0;
  stored = 0;
  duplicates = 0;
  readonly accepted: number[] = [];
  readonly rejected: RowError[] = [];
  private pending: unknown[] = [];

  constructor(
    private readonly judge: (value: unknown) => RowResult<T>,
    private readonly write: (rows: T[]) => Promise<IngestOutcome>,
  ) {}

  add(value: unknown) {
    this.pending.push(value);
  }

  /** Rows held, not yet judged. */
  get held() {
    return this.pending.length;
  }

  /** Judges and stores up to CHUNK_ROWS held rows. */
  async flush() {
    const values = this.pending.length > CHUNK_ROWS ? this.pending.splice(0, CHUNK_ROWS) : this.pending;
    if (values === this.pending) this.pending = [];
    const { valid, rejected } = judgeRows(values, this.judge);
    if (valid.length) {
      const outcome = await this.write(valid.map((v) => v.row));
      this.stored += outcome.inserted;
      this.duplicates += outcome.duplicates;
    }
    for (const v of valid) this.accepted.push(this.received + v.index);
    for (const r of rejected) this.rejected.push({ ...r, index: this.received + r.index });
    this.received += values.length;
  }

  /** Flushes until no row is held. */
  async flushAll() {
    while (this.pending.length) await this.flush();
  }

  get valid() {
    return this.accepted.length;
  }

  /** How far the list got: the first `received` rows are done (see the README on partial uploads). */
  progress() {
    return { received: this.received, stored: this.stored, duplicates: this.duplicates };
  }

  body() {
    const figures = { received: this.received, stored: this.stored, duplicates: this.duplicates };
    if (this.rejected.length === 0) return { success: true, ...figures, rejected: this.rejected };
    return { success: false, ...figures, accepted: this.accepted, rejected: this.rejected };
  }
}

/** 200 every row valid, 400 none (nothing was written), 207 otherwise. */
export function answer(
  res: Response,
  lists: ReadonlyArray<{ received: number; valid: number; rejected: readonly RowError[] }>,
  body: Record<string, unknown>,
) {
  const received = lists.reduce((a, l) => a + l.received, 0);
  const valid = lists.reduce((a, l) => a + l.valid, 0);
  if (valid === 0) {
    const rejected = lists.reduce((a, l) => a + l.rejected.length, 0);
    throw new BadRequestError(`No valid rows: ${rejected} of ${received} rejected`, { ...body, stored: 0 });
  }
  res.status(valid === received ? 200 : 207).json(body);
}

const postUploadUsage = endpoint({
  tags: ['upload'],
  summary: "Upload one day's usage of a tool on a host",
  selfParsedBody: { description: ROWS_JUDGED, content: { 'application/json': usageRowShape } },
  responses: { 200: rowListAnswer, 207: rowListAnswer },
  errors: [403, 413, 503],
});

export function uploadRouter(deps: AppDeps): Router {
  const r = Router();
  const ingest = ingestService(deps);

  r.post('/api/upload/usage', postUploadUsage, async (req, res) => {
    checkUploadAuth(req, deps.settings.SVC_UPLOAD_AUTH_KEY);
    const list = new RowList(readUsage, (rows) => ingest.ingestUsage(rows));
    list.add(req.body ?? {});
    await list.flushAll();
    answer(res, [list], list.body());
  });

  return r;
}
