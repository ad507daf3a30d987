// POST /api/upload/messages and /api/upload/batch with the body read as a stream (issue 10 item 1:
// "large batches are processed in chunks as they stream in; a 50 MB body is accepted and never held
// twice in memory"). Mounted before the app's JSON body parser (routes/index.ts mountStreamingRoutes).
// Body shapes and answers are those of api/routes/upload.ts; the README section "Uploading usage and
// messages" documents what streaming adds:
//
// - Rows are judged and stored in chunks of CHUNK_ROWS (one transaction each) while the body arrives;
//   the body is not read while a chunk is being written (backpressure). Limits: MAX_BODY_BYTES
//   decoded bytes and MAX_ROWS rows per request, 413 {error} naming the limit beyond.
// - /messages: rows take defaults from the envelope (date, tool_name, host_name), so no row is stored
//   before the envelope is decided: once date and tool_name have been read and either host_name has
//   been read or a whole chunk of rows is held, else at the end of the body (a body that sends the
//   envelope after `messages` is held until its end). A bad envelope is a 400 {error} naming the field
//   and nothing is stored. An envelope field that comes after it was decided is a 400 too.
// - /batch: rows carry their own date, tool and host; they are stored as they come.
// - An error after rows were stored (malformed JSON in the middle, a limit passed by a chunked body, a
//   late envelope field) answers with the progress: per list {received, stored, duplicates}, the first
//   `received` rows of the list are done (they stay stored; uploading them again is idempotent).
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { AppError, BadRequestError } from '../../domain/errors.ts';
import {
  isCalendarDate,
  type MessageDefaults,
  readMessage,
  readUsage,
} from '../../domain/usage/ingest-rows.ts';
import { parseInput } from '../../domain/validation.ts';
import type { AppDeps } from '../../services/deps.ts';
import { CHUNK_ROWS, ingestService } from '../../services/usage/ingest.ts';
import { BodyTooLargeError, MalformedBodyError, readJsonEnvelope } from '../json-envelope-stream.ts';
import { decodedBody, InflationLimitError, MAX_INFLATION_RATIO } from '../middleware/body.ts';
import { endpoint } from '../openapi/endpoint.ts';
import { answer, RowList, uploadAuth, uploadWriters } from './upload.ts';
import {
  batchAnswer,
  batchShape,
  messagesEnvelopeShape,
  ROWS_JUDGED,
  rowListAnswer,
  UPLOAD_MEDIA,
} from './upload-shapes.ts';

/** The largest body accepted (decoded bytes), as the JSON body parser's limit. */
export const MAX_BODY_BYTES = 50 * 1024 * 1024;
/** The most rows (messages and usage reports together) in one request. */
export const MAX_ROWS = 200_000;

const calendarDate = z.string().refine(isCalendarDate, 'must be a date YYYY-MM-DD');
const rows = z.array(z.unknown(), 'must be a list of rows').min(1, 'must not be empty');

/** The /messages envelope; `messages` is checked on a stand-in (see decide()). */
const messagesEnvelope = z.object({
  date: calendarDate,
  tool_name: z.string().min(1, 'is required').max(100),
  host_name: z.string().min(1).max(255).optional(),
  messages: rows,
});
const ENVELOPE_FIELDS = new Set(['date', 'tool_name', 'host_name']);

const tooLarge = (message: string, extra: Record<string, unknown> = {}) => new AppError(413, message, extra);
const BODY_LIMIT_TEXT = `Request body too large (limit ${MAX_BODY_BYTES / 1024 / 1024} MB)`;
const INFLATION_LIMIT_TEXT = `Compressed body inflates too far (limit ${MAX_INFLATION_RATIO} times its compressed size and ${MAX_BODY_BYTES / 1024 / 1024} MB decoded)`;
const ROW_LIMIT_TEXT = `Too many rows (limit ${MAX_ROWS.toLocaleString('en-US')} per request)`;

const bodyOf = (req: Request) => decodedBody(req, MAX_BODY_BYTES);

/**
 * Streams the body into `visitor`-like handlers and turns reading errors into answers: 400 malformed
 * JSON, 413 limits; once any row was stored an error also carries `progress()`.
 */
async function streamBody(
  req: Request,
  res: Response,
  lists: ReadonlySet<string>,
  handlers: {
    field(key: string, value: unknown): void;
    listStart(list: string): void;
    row(list: string, value: unknown): void;
    drain(): Promise<void>;
    end(): Promise<void>;
    progress(): Record<string, unknown>;
    committed(): number;
  },
) {
  const declared = Number(req.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) {
    res.set('connection', 'close');
    throw tooLarge(BODY_LIMIT_TEXT);
  }
  try {
    await readJsonEnvelope(bodyOf(req), { lists, maxBytes: MAX_BODY_BYTES }, handlers);
    await handlers.end();
  } catch (e) {
    if (!req.complete) res.set('connection', 'close');
    if (e instanceof MalformedBodyError)
      throw new BadRequestError(
        `Malformed JSON body: ${e.message} (after ${e.bytes} bytes)`,
        handlers.progress(),
      );
    if (e instanceof BodyTooLargeError) throw tooLarge(BODY_LIMIT_TEXT, handlers.progress());
    if (e instanceof InflationLimitError) throw tooLarge(INFLATION_LIMIT_TEXT, handlers.progress());
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('Z_'))
      throw new BadRequestError(`Malformed ${req.get('content-encoding')} body`, handlers.progress());
    // The client went away mid-body: nobody reads this answer, but it must not count as a server error.
    if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE')
      throw new BadRequestError('The request body was cut off', handlers.progress());
    if (e instanceof AppError && e.status < 500 && handlers.committed() > 0)
      throw new AppError(e.status, e.message, { ...e.extra, ...handlers.progress() });
    throw e;
  }
}

const STREAMED = `${ROWS_JUDGED} The body is read as a stream and stored in chunks while it arrives (${UPLOAD_MEDIA}).`;
const postUploadMessages = endpoint({
  tags: ['upload'],
  summary: "Upload a day's messages of a tool on a host",
  selfParsedBody: {
    description: `${STREAMED} The envelope (date, tool_name, host_name) is checked by its zod schema.`,
    content: { 'application/json': messagesEnvelopeShape },
  },
  responses: { 200: rowListAnswer, 207: rowListAnswer },
  errors: [403, 413, 415, 503],
});
const postUploadBatch = endpoint({
  tags: ['upload'],
  summary: 'Upload messages and usage reports of any day, tool and host',
  selfParsedBody: { description: STREAMED, content: { 'application/json': batchShape } },
  responses: { 200: batchAnswer, 207: batchAnswer },
  errors: [403, 413, 415, 503],
});

export function uploadStreamRouter(deps: AppDeps): Router {
  const r = Router();
  const ingest = ingestService(deps);
  const identify = uploadAuth(deps);

  r.post('/api/upload/messages', postUploadMessages, async (req, res) => {
    const write = uploadWriters(ingest, await identify(req));
    const envelope: Record<string, unknown> = {};
    let defaults: MessageDefaults | undefined;
    let sawList = false;
    let rowCount = 0;
    const list = new RowList((v) => readMessage(v, defaults), write.messages);
    /** Validates the envelope (nothing is stored before); `messages` is judged by its row count. */
    const decide = () => {
      const stand = sawList ? new Array(Math.min(rowCount, 1)).fill(null) : envelope.messages;
      const e = parseInput(messagesEnvelope, { ...envelope, messages: stand });
      defaults = { date: e.date, toolName: e.tool_name, hostName: e.host_name };
    };
    const canDecide = () =>
      'date' in envelope && 'tool_name' in envelope && ('host_name' in envelope || list.held >= CHUNK_ROWS);

    await streamBody(req, res, new Set(['messages']), {
      field(key, value) {
        if (key === 'messages') throw new BadRequestError('messages: must be a list of rows');
        if (!ENVELOPE_FIELDS.has(key)) return;
        if (defaults !== undefined)
          throw new BadRequestError(
            `${key}: must come before messages (the envelope was already decided and rows stored by it)`,
          );
        envelope[key] = value;
      },
      listStart() {
        sawList = true;
      },
      row(_list, value) {
        if (++rowCount > MAX_ROWS) throw tooLarge(ROW_LIMIT_TEXT);
        list.add(value);
      },
      async drain() {
        if (defaults === undefined) {
          if (!canDecide()) return;
          decide();
        }
        while (list.held >= CHUNK_ROWS) await list.flush();
      },
      async end() {
        if (defaults === undefined) decide();
        await list.flushAll();
      },
      progress: () => list.progress(),
      committed: () => list.received,
    });
    answer(res, [list], list.body());
  });

  r.post('/api/upload/batch', postUploadBatch, async (req, res) => {
    const write = uploadWriters(ingest, await identify(req));
    const messages = new RowList((v) => readMessage(v, {}), write.messages);
    const usage = new RowList(readUsage, write.usage);
    const listOf = (key: string) => (key === 'messages' ? messages : usage);
    let rowCount = 0;
    const progress = () => ({ messages: messages.progress(), usage: usage.progress() });

    await streamBody(req, res, new Set(['messages', 'usage']), {
      field(key) {
        if (key === 'messages' || key === 'usage')
          throw new BadRequestError(`${key}: must be a list of rows`);
      },
      listStart() {},
      row(list, value) {
        if (++rowCount > MAX_ROWS) throw tooLarge(ROW_LIMIT_TEXT);
        listOf(list).add(value);
      },
      async drain() {
        for (const l of [messages, usage]) while (l.held >= CHUNK_ROWS) await l.flush();
      },
      async end() {
        if (rowCount === 0) throw new BadRequestError('messages or usage rows are required');
        await messages.flushAll();
        await usage.flushAll();
      },
      progress,
      committed: () => messages.received + usage.received,
    });
    answer(res, [messages, usage], {
      success: messages.body().success && usage.body().success,
      messages: messages.body(),
      usage: usage.body(),
    });
  });

  return r;
}
