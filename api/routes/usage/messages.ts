// The "Messages" table of spec document 2: stored messages (daily_messages) filtered, searched
// (full-text, db/full-text.ts) and paginated (limit 50, offset 0 by default; limit cut to 500), their
// senders and conversations. Every read is inside the caller's tenant scope (rule 5); a conversation
// outside it answers 404 exactly like an unknown one, so its existence never leaks. Permission:
// view_messages. Bodies are documented in docs/administrators/usage-analytics-and-roi.md "Reading usage".
//
//   GET /api/messages?date&start_date&end_date&tool&host&sender&role&search&limit&offset
//        {messages: [...], limit, offset, has_more}
//   GET /api/messages/count?(same filters)                {count}
//   GET /api/senders?host                                 {senders: [{sender_name, user_id, message_count, last_date}]}
//   GET /api/conversation-history?date&tool&host&sender&limit&offset
//        {conversations: [{session_id, tool_name, host_name, ..., message_count, requests, tokens}], limit, offset, has_more}
//   GET /api/conversation-timeline/:session_id            {session_id, count, messages: [... oldest first]}
//   GET /api/conversation-details/:session_id             {session_id, totals..., session: agent_sessions row | null}
import { type Request, Router } from 'express';
import { z } from 'zod';
import { type MessageFilter, messageReadRepository } from '../../../db/repositories/usage/read-messages.ts';
import { BadRequestError, NotFoundError } from '../../../domain/errors.ts';
import { isRequest } from '../../../domain/usage/counting.ts';
import type { AppDeps } from '../../../services/deps.ts';
import { authenticate, requirePermission } from '../../middleware/auth.ts';
import { endpoint } from '../../openapi/endpoint.ts';
import { count, day, listOf, nullableInt, nullableString } from '../../openapi/shapes.ts';
import { calendarDate, hostFilter, name, page, readContext, toolFilter } from './query.ts';

const filters = {
  date: calendarDate.optional(),
  start_date: calendarDate.optional(),
  end_date: calendarDate.optional(),
  ...toolFilter,
  ...hostFilter,
  sender: name().optional(),
  role: z.enum(['user', 'assistant'], 'must be user or assistant').optional(),
  search: z.string().max(500, 'must be at most 500 characters').optional(),
};
const listQuery = z.object({ ...filters, ...page });
const countQuery = z.object(filters);
const historyQuery = z.object({
  date: calendarDate.optional(),
  ...toolFilter,
  ...hostFilter,
  sender: name().optional(),
  ...page,
});
const sessionParams = z.object({ session_id: name() });

/** The repository filter of the query: start_date/end_date as a checked range when either is given. */
function messageFilter(q: z.infer<typeof countQuery>): MessageFilter {
  const f: MessageFilter = {
    date: q.date,
    tool: q.tool,
    host: q.host,
    sender: q.sender,
    role: q.role,
    search: q.search,
  };
  if (q.start_date === undefined && q.end_date === undefined) return f;
  if (q.start_date !== undefined && q.end_date !== undefined && q.end_date < q.start_date)
    throw new BadRequestError('end_date: must not be before start_date');
  return { ...f, start: q.start_date, end: q.end_date };
}

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const ns = nullableString;
const messageRow = z.looseObject({
  id: count,
  message_id: z.string(),
  date: day,
  tool_name: z.string(),
  host_name: z.string(),
  role: z.string(),
  content: ns,
  tokens_used: count,
  input_tokens: count,
  output_tokens: count,
  model: ns,
  timestamp: ns,
  sender_name: ns,
  conversation_id: ns,
  user_id: nullableInt,
});
const pageFlags = { limit: count, offset: count, has_more: z.boolean() };
const getMessages = endpoint({
  tags: ['usage'],
  query: listQuery,
  responses: { 200: z.looseObject({ messages: z.array(messageRow), ...pageFlags }) },
});
const getMessagesCount = endpoint({
  tags: ['usage'],
  query: countQuery,
  responses: { 200: z.looseObject({ count }) },
});
const getSenders = endpoint({
  tags: ['usage'],
  query: z.object(hostFilter),
  responses: {
    200: listOf(
      'senders',
      z.looseObject({ sender_name: ns, user_id: nullableInt, message_count: count, last_date: ns }),
    ),
  },
});
const getConversationHistory = endpoint({
  tags: ['usage'],
  query: historyQuery,
  responses: {
    200: z.looseObject({
      conversations: z.array(
        z.looseObject({
          session_id: z.string(),
          first_date: ns,
          last_date: ns,
          started_at: ns,
          last_message_at: ns,
          message_count: count,
          requests: count,
          tokens: count,
        }),
      ),
      ...pageFlags,
    }),
  },
});
const getConversationTimelineId = endpoint({
  tags: ['usage'],
  params: sessionParams,
  responses: { 200: z.looseObject({ session_id: z.string(), count, messages: z.array(messageRow) }) },
});
const getConversationDetailsId = endpoint({
  tags: ['usage'],
  params: sessionParams,
  responses: {
    200: z.looseObject({
      session_id: z.string(),
      tool_names: z.array(z.string()),
      host_names: z.array(z.string()),
      senders: z.array(z.string()),
      models: z.array(z.string()),
      first_date: ns,
      last_date: ns,
      started_at: ns,
      last_message_at: ns,
      message_count: count,
      user_messages: count,
      requests: count,
      total_tokens: count,
      total_input_tokens: count,
      total_output_tokens: count,
      session: z.looseObject({ session_id: z.string() }).nullable(),
    }),
  },
});

export function messagesRouter(deps: AppDeps): Router {
  const r = Router();
  const messages = messageReadRepository(deps.database.sql);
  const guard = [authenticate(deps), requirePermission('view_messages')];
  const scopeOf = (req: Request) => readContext(deps, req);

  r.get('/api/messages', getMessages, ...guard, async (req, res) => {
    const q = getMessages.query(req);
    const { scope } = scopeOf(req);
    // One row more than the page tells whether another page follows, without counting every match.
    const rows = await messages.list(scope, messageFilter(q), { limit: q.limit + 1, offset: q.offset });
    res.json({
      messages: rows.slice(0, q.limit),
      limit: q.limit,
      offset: q.offset,
      has_more: rows.length > q.limit,
    });
  });

  r.get('/api/messages/count', getMessagesCount, ...guard, async (req, res) => {
    const q = getMessagesCount.query(req);
    const { scope } = scopeOf(req);
    res.json({ count: await messages.count(scope, messageFilter(q)) });
  });

  r.get('/api/senders', getSenders, ...guard, async (req, res) => {
    const q = getSenders.query(req);
    res.json({ senders: await messages.senders(scopeOf(req).scope, q.host) });
  });

  r.get('/api/conversation-history', getConversationHistory, ...guard, async (req, res) => {
    const q = getConversationHistory.query(req);
    const rows = await messages.conversations(
      scopeOf(req).scope,
      { date: q.date, tool: q.tool, host: q.host, sender: q.sender },
      { limit: q.limit + 1, offset: q.offset },
    );
    res.json({
      conversations: rows.slice(0, q.limit),
      limit: q.limit,
      offset: q.offset,
      has_more: rows.length > q.limit,
    });
  });

  r.get('/api/conversation-timeline/:session_id', getConversationTimelineId, ...guard, async (req, res) => {
    const { session_id } = getConversationTimelineId.params(req);
    const { scope } = scopeOf(req);
    const [rows, session] = await Promise.all([
      messages.conversationMessages(scope, session_id),
      messages.sessionRow(scope, session_id),
    ]);
    if (!rows.length && !session) throw new NotFoundError('Conversation not found');
    res.json({ session_id, count: rows.length, messages: rows });
  });

  r.get('/api/conversation-details/:session_id', getConversationDetailsId, ...guard, async (req, res) => {
    const { session_id } = getConversationDetailsId.params(req);
    const { scope } = scopeOf(req);
    const [rows, session] = await Promise.all([
      messages.conversationMessages(scope, session_id),
      messages.sessionRow(scope, session_id),
    ]);
    if (!rows.length && !session) throw new NotFoundError('Conversation not found');
    const sum = (pick: (m: (typeof rows)[number]) => number) => rows.reduce((a, m) => a + pick(m), 0);
    const times = rows
      .map((m) => m.timestamp)
      .filter((t): t is string => t !== null)
      .sort();
    const dates = rows.map((m) => m.date).sort();
    const distinct = (pick: (m: (typeof rows)[number]) => string | null) =>
      [...new Set(rows.map(pick).filter((v): v is string => v !== null))].sort();
    res.json({
      session_id,
      tool_names: distinct((m) => m.tool_name),
      host_names: distinct((m) => m.host_name),
      senders: distinct((m) => m.sender_name),
      models: distinct((m) => m.model),
      first_date: dates[0] ?? null,
      last_date: dates.at(-1) ?? null,
      started_at: times[0] ?? null,
      last_message_at: times.at(-1) ?? null,
      message_count: rows.length,
      user_messages: rows.filter((m) => m.role === 'user').length,
      requests: rows.filter((m) => isRequest(m.role)).length,
      total_tokens: sum((m) => m.tokens_used),
      total_input_tokens: sum((m) => m.input_tokens),
      total_output_tokens: sum((m) => m.output_tokens),
      session,
    });
  });

  return r;
}
