// The documented upload rows (api/routes/upload-shapes.ts, shown in /api/openapi.json) held against
// the readers that really judge them (domain/usage/ingest-rows.ts readUsage / readMessage): for each
// row below, the document accepts it exactly when the reader does. A field added to a reader with a
// limit the document does not know, or a limit changed on one side, makes a row disagree.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { messageRowShape, usageRowShape } from '../../api/routes/upload-shapes.ts';
import { readMessage, readUsage } from '../../domain/usage/ingest-rows.ts';

const ajv = new Ajv2020({ strict: false, validateFormats: false });
const schemaOf = (s: z.ZodType) => ajv.compile(z.toJSONSchema(s, { target: 'draft-2020-12', io: 'input' }));

const long = (n: number) => 'x'.repeat(n);

test('a usage row is documented as valid exactly when readUsage accepts it', () => {
  const valid = schemaOf(usageRowShape);
  const base = { date: '2026-11-24', tool_name: 'cli_alpha' };
  const rows: [string, Record<string, unknown>][] = [
    ['minimal', base],
    ['all counts', { ...base, input_tokens: 3, output_tokens: '4', cache_tokens: 0, request_count: 2 }],
    ['null optional fields', { ...base, host_name: null, tokens_used: null, models_used: null }],
    ['host at its limit', { ...base, host_name: long(255) }],
    ['host past its limit', { ...base, host_name: long(256) }],
    ['tool past its limit', { ...base, tool_name: long(101) }],
    ['empty tool', { ...base, tool_name: '' }],
    ['no tool', { date: base.date }],
    ['no date', { tool_name: 'cli_alpha' }],
    ['negative count', { ...base, input_tokens: -1 }],
    ['fractional count', { ...base, output_tokens: 1.5 }],
    ['count as words', { ...base, request_count: 'two' }],
    ['models past their limit', { ...base, models_used: long(1001) }],
    ['host not a string', { ...base, host_name: 7 }],
  ];
  for (const [name, row] of rows) assert.equal(valid(row), readUsage(row).ok, name);
});

test('a message row is documented as valid exactly when readMessage accepts it (with an envelope)', () => {
  const valid = schemaOf(messageRowShape);
  const defaults = { date: '2026-11-24', toolName: 'cli_alpha' };
  const base = { message_id: 'm1', role: 'user' };
  const rows: [string, Record<string, unknown>][] = [
    ['minimal', base],
    [
      'assistant with counts',
      { ...base, role: 'assistant', input_tokens: 1, output_tokens: '2', model: 'm' },
    ],
    ['full entry as an object', { ...base, full_entry: { a: 1 } }],
    ['unknown role', { ...base, role: 'robot' }],
    ['no message id', { role: 'user' }],
    ['message id past its limit', { ...base, message_id: long(256) }],
    ['model past its limit', { ...base, model: long(101) }],
    ['session id past its limit', { ...base, agent_session_id: long(65) }],
    ['project path at its limit', { ...base, project_path: long(500) }],
    ['negative tokens', { ...base, tokens_used: -3 }],
    ['content not a string', { ...base, content: 5 }],
  ];
  for (const [name, row] of rows) assert.equal(valid(row), readMessage(row, defaults).ok, name);
});
