// POST /api/upload/usage, /api/upload/messages and /api/upload/batch (spec document 2, "Upload, fetch
// and reports"; the body shapes beyond the spec's table are chosen here and documented in the README
// section "Uploading usage and messages"):
//
//   auth: header X-Upload-Auth = a personal upload token (svcup_..., also accepted as Authorization:
//         Bearer; api/routes/upload-tokens.ts): every row counts for the token's owner whatever its
//         sender fields say; 401 revoked or expired, 403 unknown or its owner deactivated. Or the shared
//         settings.SVC_UPLOAD_AUTH_KEY (trusted collectors: rows are attributed by their sender fields),
//         compared in constant time: 503 unset, 403 wrong or switched off (SVC_UPLOAD_SHARED_KEY=off).
//         401 without a credential.
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
// chunks while the body arrives; they share this module's upload credential check, writers and answers (RowList).
import { type Request, type Response, Router } from 'express';
import { BadRequestError } from '../../domain/errors.ts';
import {
  judgeRows,
  type MessageRow,
  type RowError,
  type RowResult,
  readUsage,
  type UsageRow,
} from '../../domain/usage/ingest-rows.ts';
import { writeAudit } from '../../services/audit.ts';
import type { AppDeps } from '../../services/deps.ts';
import { type UploadIdentity, UploadTokenRefused, uploadAuthService } from '../../services/upload-tokens.ts';
import {
  CHUNK_ROWS,
  type IngestOutcome,
  type IngestService,
  ingestService,
} from '../../services/usage/ingest.ts';
import { endpoint } from '../openapi/endpoint.ts';
import { ROWS_JUDGED, rowListAnswer, usageRowShape } from './upload-shapes.ts';

/**
 * The upload credential check (services/upload-tokens.ts): a personal token's owner, or the shared key.
 * A refused personal token is audited (bounded per token and reason) and answered 401 or 403.
 */
export function uploadAuth(deps: AppDeps) {
  const auth = uploadAuthService(deps);
  return async (req: Request): Promise<UploadIdentity> => {
    try {
      return await auth.identify({
        uploadAuth: req.get('x-upload-auth'),
        authorization: req.get('authorization'),
      });
    } catch (err) {
      if (!(err instanceof UploadTokenRefused)) throw err;
      await auditRefusedToken(deps, req, err);
      throw err.error;
    }
  };
}

/** Audits a refused personal upload token (bounded per token and reason); also the OTLP ingest's. */
export async function auditRefusedToken(deps: AppDeps, req: Request, err: UploadTokenRefused) {
  await writeAudit(deps, req, {
    action: 'UPLOAD_TOKEN_REFUSED',
    resourceType: 'upload_token',
    resourceId: err.token?.id,
    success: false,
    severity: 'warning',
    userId: err.token?.userId ?? null,
    tenantId: err.token?.tenantId ?? null,
    username: err.token?.username ?? null,
    details: { reason: err.reason, path: req.path },
    rateLimitKey: `${err.token?.id ?? 'unknown'}:${err.reason}`,
  });
}

/**
 * How an upload's rows are stored for its sender: with a personal token every message row is its
 * owner's (the rows' sender fields are kept as written but attribute nothing) and usage reports land
 * in the owner's tenant; with the shared key rows are attributed by their sender fields.
 */
export function uploadWriters(ingest: IngestService, who: UploadIdentity) {
  const owner = who.kind === 'personal' ? { userId: who.userId, tenantId: who.tenantId } : undefined;
  return {
    messages: (rows: MessageRow[]) =>
      ingest.ingestMessages(owner ? rows.map((r) => ({ ...r, owner })) : rows),
    usage: (rows: UsageRow[]) => ingest.ingestUsage(rows, owner && { tenantId: owner.tenantId }),
  };
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
  const identify = uploadAuth(deps);

  r.post('/api/upload/usage', postUploadUsage, async (req, res) => {
    const write = uploadWriters(ingest, await identify(req));
    const list = new RowList(readUsage, write.usage);
    list.add(req.body ?? {});
    await list.flushAll();
    answer(res, [list], list.body());
  });

  return r;
}
