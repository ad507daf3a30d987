// What the upload routes take and answer, for /api/openapi.json (api/openapi/endpoint.ts). The rows
// are not parsed by these schemas: each row is judged on its own by readMessage / readUsage
// (domain/usage/ingest-rows.ts) so that one bad row is rejected with its index while the others are
// stored (207). These schemas describe the rows those readers accept, field by field (names, types,
// limits); test/unit/upload-shapes.test.ts holds them against the readers.
import { z } from 'zod';
import { MAX_UPLOAD_COUNT, MESSAGE_ROLES } from '../../domain/usage/ingest-rows.ts';

const date = z.string().meta({ format: 'date', description: 'YYYY-MM-DD' });
const countField = z
  .union([
    z.number().int().min(0).max(MAX_UPLOAD_COUNT),
    z
      .string()
      .regex(/^\d{1,16}$/)
      .meta({ description: `Digits; at most ${MAX_UPLOAD_COUNT}` }),
  ])
  .nullable()
  .optional();
const text = (max?: number) => (max ? z.string().max(max) : z.string()).nullable().optional();

export const usageRowShape = z.looseObject({
  date,
  tool_name: z.string().min(1).max(100),
  host_name: text(255).meta({ description: 'Default: localhost' }),
  tokens_used: countField.meta({ description: 'Default: input_tokens + output_tokens' }),
  input_tokens: countField,
  output_tokens: countField,
  cache_tokens: countField,
  request_count: countField,
  models_used: text(1000).meta({ description: 'Comma-separated model names' }),
});

export const messageRowShape = z.looseObject({
  message_id: z.string().min(1).max(255),
  role: z.enum(MESSAGE_ROLES),
  date: date
    .nullable()
    .optional()
    .meta({ description: "Default: the envelope's, else the timestamp's UTC day" }),
  tool_name: text(100).meta({ description: "Default: the envelope's" }),
  host_name: text(255),
  timestamp: z
    .string()
    .nullable()
    .optional()
    .meta({ description: 'ISO 8601 (a time without a zone is UTC)' }),
  content: text(),
  full_entry: z
    .union([z.string(), z.looseObject({})])
    .nullable()
    .optional(),
  parent_id: text(255),
  tokens_used: countField,
  input_tokens: countField,
  output_tokens: countField,
  model: text(100),
  sender_id: text(255),
  sender_name: text(255),
  message_source: text(50),
  conversation_id: text(255),
  agent_session_id: text(64),
  project_path: text(500),
});

export const messagesEnvelopeShape = z.looseObject({
  date,
  tool_name: z.string().min(1).max(100),
  host_name: z.string().min(1).max(255).optional(),
  messages: z.array(messageRowShape).min(1),
});

export const batchShape = z.looseObject({
  messages: z.array(messageRowShape).optional(),
  usage: z.array(usageRowShape).optional(),
});

const rowError = z.looseObject({ index: z.number().int(), field: z.string(), error: z.string() });
/** One list's answer (RowList.body in upload.ts). */
export const rowListAnswer = z.looseObject({
  success: z.boolean(),
  received: z.number().int(),
  stored: z.number().int(),
  duplicates: z.number().int(),
  accepted: z.array(z.number().int()).optional().meta({ description: 'When some row was rejected' }),
  rejected: z.array(rowError),
});
export const batchAnswer = z.looseObject({
  success: z.boolean(),
  messages: rowListAnswer,
  usage: rowListAnswer,
});

export const UPLOAD_MEDIA = 'Content-Encoding gzip or deflate accepted';
export const ROWS_JUDGED =
  'Rows are judged one by one (domain/usage/ingest-rows.ts): 200 every row stored or already present, ' +
  '207 some rows rejected (their index, field and reason), 400 none valid. A body past the size or row ' +
  'limit is a 413.';
