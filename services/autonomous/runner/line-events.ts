// What one stdout line of an AI CLI means for the autonomous runner: the activity events it carries
// (spec document 2, "Events" 2: tool use, assistant text, usage, retries, system events, errors) and
// whether it is a structured context-overflow error (spec "Errors" 4).
//
// Line formats (the same CLIs and adapters as the remote agent, agent/adapters.ts, which already reads
// the conversation id, turn end, usage and turn error of a line; this file reads the rest):
//   stream-json (Claude Code, Qwen Code, generic): system/init, system/api_retry, assistant messages
//     whose content blocks are text, tool_use or thinking, result;
//   Codex `exec --json`: thread.started, item.completed (agent_message, reasoning, command_execution,
//     file_change, mcp_tool_call, web_search), turn.completed, turn.failed, error;
//   Gemini CLI stream-json: init, message (assistant deltas), tool_use, result, error (warnings).
// Not emitted: empty assistant text, thinking / reasoning blocks and any thinking-token estimate.
//
// Context overflow is recognised ONLY from structured fields, never by reading free text: a result /
// turn.failed / error line whose `error` object (or the provider error object it wraps, `error.error`)
// has `code` or `type` in CONTEXT_OVERFLOW_CODES, or whose `subtype` is one of them. These are the
// providers' machine-readable codes for a prompt over the context window (OpenAI and OpenAI-compatible
// APIs: `context_length_exceeded`; Anthropic's stop reason `model_context_window_exceeded`); the model
// proxy relays provider error bodies untouched (api/llm-proxy/provider-error-relay.ts), so a CLI that
// forwards the provider's error object carries the code to us.
import type { LineInfo } from '../../../agent/adapters.ts';
import type { ActivityEventType, AutonomousActivityEvent } from '../activity-bus.ts';

export type LineEvent = Omit<AutonomousActivityEvent, 'workflowId' | 'line' | 'at'> & {
  type: ActivityEventType;
};

export const CONTEXT_OVERFLOW_CODES: ReadonlySet<string> = new Set([
  'context_length_exceeded',
  'model_context_window_exceeded',
  'context_window_exceeded',
]);

const MAX_TEXT = 4000;
const MAX_INPUT = 500;

const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max)}…` : s);
const isObject = (v: unknown): v is Record<string, unknown> =>
  Boolean(v) && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

function inputJson(input: unknown): string {
  try {
    return cut(JSON.stringify(input ?? {}), MAX_INPUT);
  } catch {
    return '{}';
  }
}

function text(value: string): LineEvent[] {
  return value.trim() ? [{ type: 'assistant_text', text: cut(value, MAX_TEXT) }] : [];
}

/** The structured context-overflow code the line carries (see the header), if any. */
export function contextOverflowCode(event: Record<string, unknown>): string | undefined {
  const codes: unknown[] = [event.subtype];
  const error = event.error;
  if (typeof error === 'string') codes.push(error);
  if (isObject(error)) {
    codes.push(error.code, error.type);
    if (isObject(error.error)) codes.push(error.error.code, error.error.type);
  }
  return codes.find((c): c is string => typeof c === 'string' && CONTEXT_OVERFLOW_CODES.has(c));
}

export const isContextOverflow = (event: Record<string, unknown>): boolean =>
  contextOverflowCode(event) !== undefined;

/** The final answer text a line carries, if any (a successful result, or an assistant message). */
export function finalTextOf(event: Record<string, unknown>): string | undefined {
  if (event.type === 'result' && event.is_error !== true && typeof event.result === 'string')
    return event.result;
  if (event.type === 'item.completed' && isObject(event.item) && event.item.type === 'agent_message')
    return str(event.item.text);
  return undefined;
}

/** Activity events of one parsed stdout line; `info` is the adapter's reading of the same line. */
export function lineEvents(event: Record<string, unknown>, info: LineInfo): LineEvent[] {
  const events: LineEvent[] = [];
  const type = event.type;
  if (type === 'system' || type === 'init' || type === 'thread.started') {
    if (event.subtype === 'api_retry') {
      const attempt = typeof event.attempt === 'number' ? event.attempt : undefined;
      const status = typeof event.error_status === 'number' ? ` (status ${event.error_status})` : '';
      events.push({ type: 'retry', attempt, text: `the CLI retries a model call${status}` });
    } else {
      const subtype = str(event.subtype) ?? (type === 'system' ? 'system' : 'init');
      events.push({
        type: 'system',
        subtype: subtype.slice(0, 40),
        ...(info.conversationId ? { providerSessionId: info.conversationId } : {}),
        ...(str(event.model) ? { model: String(event.model).slice(0, 100) } : {}),
      });
    }
  } else if (type === 'assistant' && isObject(event.message)) {
    const content = event.message.content;
    if (typeof content === 'string') events.push(...text(content));
    else if (Array.isArray(content))
      for (const block of content) {
        if (!isObject(block)) continue;
        if (block.type === 'text' && typeof block.text === 'string') events.push(...text(block.text));
        else if (block.type === 'tool_use')
          events.push({
            type: 'tool_use',
            tool: (str(block.name) ?? 'tool').slice(0, 100),
            input: inputJson(block.input),
          });
        // thinking / redacted_thinking: never emitted.
      }
  } else if (type === 'message' && event.role === 'assistant' && typeof event.content === 'string') {
    events.push(...text(event.content));
  } else if (type === 'tool_use') {
    events.push({
      type: 'tool_use',
      tool: (str(event.tool_name) ?? 'tool').slice(0, 100),
      input: inputJson(event.parameters),
    });
  } else if (type === 'item.completed' && isObject(event.item)) {
    const item = event.item;
    if (item.type === 'agent_message' && typeof item.text === 'string') events.push(...text(item.text));
    else if (item.type === 'command_execution')
      events.push({ type: 'tool_use', tool: 'command', input: inputJson({ command: item.command }) });
    else if (item.type === 'file_change')
      events.push({ type: 'tool_use', tool: 'file_change', input: inputJson({ changes: item.changes }) });
    else if (item.type === 'mcp_tool_call' || item.type === 'web_search')
      events.push({
        type: 'tool_use',
        tool: String(item.type),
        input: inputJson({ tool: item.tool, query: item.query }),
      });
    // reasoning: never emitted.
  } else if (type === 'error') {
    // Codex reconnect notices and Gemini warnings: the CLI is retrying or carrying on.
    events.push({
      type: 'retry',
      text: cut(str(event.message) ?? 'the CLI reported a transient error', 300),
    });
  }
  if (info.usage)
    events.push({
      type: 'usage',
      usage: {
        input_tokens: info.usage.input_tokens,
        output_tokens: info.usage.output_tokens,
        cache_tokens: info.usage.cache_tokens,
      },
    });
  if (info.turnError) events.push({ type: 'error', text: cut(info.turnError, 500) });
  return events;
}
