// The model calls in an OTLP logs export (issue 29 item 2): each CLI's request event read into the
// usage of one call, in the proxy's token conventions (domain/usage/usage.ts: input counts cache reads
// and writes, output counts reasoning), so a call seen by both the proxy and the CLI's telemetry
// compares equal (services/otlp/ingest.ts de-duplicates them). Events read, from each CLI's docs:
//
//   Claude Code  claude_code.api_request   model, input_tokens (without cache), output_tokens,
//                                          cache_read_tokens, cache_creation_tokens, cost_usd, duration_ms
//   Codex        codex.sse_event with event.kind=response.completed: model, input_token_count (with
//                cached), output_token_count (with reasoning), cached_token_count, duration_ms
//   Gemini CLI   gemini_cli.api_response   model, input_token_count (with cached), output_token_count
//                (candidates) + thoughts_token_count, cached_content_token_count, duration_ms
//   Qwen Code    qwen-code.api_response    as Gemini CLI, but its output_token_count already holds the
//                thoughts (an OpenAI-style completion count), so they are not added again
//
// Every other event (prompts, tool results, errors) is not usage and is skipped.
import {
  type Attrs,
  attrsOf,
  fullName,
  identityOf,
  nanosToDate,
  num,
  type OtelTool,
  str,
  toolOf,
} from './attributes.ts';

export interface OtelCall {
  tool: OtelTool;
  /** A digest of the resource, the event's attributes and its times: the same export twice, one call. */
  identity: string;
  at: Date;
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number | null;
  durationMs: number | null;
  sessionId: string | null;
  hostName: string | null;
}

interface LogRecord {
  timeUnixNano?: string;
  observedTimeUnixNano?: string;
  eventName?: string;
  body?: { stringValue?: string };
  attributes?: unknown;
}

function tokensOf(name: string, a: Attrs) {
  switch (name) {
    case 'claude_code.api_request': {
      const cacheRead = num(a, 'cache_read_tokens');
      const cacheWrite = num(a, 'cache_creation_tokens');
      return {
        input: num(a, 'input_tokens') + cacheRead + cacheWrite,
        output: num(a, 'output_tokens'),
        cacheRead,
        cacheWrite,
      };
    }
    case 'codex.sse_event':
      if (a['event.kind'] !== 'response.completed') return undefined;
      return {
        input: num(a, 'input_token_count'),
        output: num(a, 'output_token_count'),
        cacheRead: num(a, 'cached_token_count'),
        cacheWrite: 0,
      };
    case 'gemini_cli.api_response':
    case 'qwen-code.api_response': {
      if (a.error !== undefined) return undefined;
      const thoughts = name === 'gemini_cli.api_response' ? num(a, 'thoughts_token_count') : 0;
      return {
        input: num(a, 'input_token_count'),
        output: num(a, 'output_token_count') + thoughts,
        cacheRead: num(a, 'cached_content_token_count'),
        cacheWrite: 0,
      };
    }
    default:
      return undefined;
  }
}

/** The model calls of a decoded ExportLogsServiceRequest; `now` for a record without any time. */
export function callsOfLogs(request: Record<string, unknown>, now: Date): OtelCall[] {
  const calls: OtelCall[] = [];
  for (const rl of (request.resourceLogs as Array<Record<string, unknown>>) ?? []) {
    const resource = attrsOf((rl.resource as { attributes?: unknown } | undefined)?.attributes);
    const service = str(resource, 'service.name');
    for (const sl of (rl.scopeLogs as Array<{ logRecords?: LogRecord[] }>) ?? []) {
      for (const record of sl.logRecords ?? []) {
        const a = attrsOf(record.attributes);
        const raw = record.eventName || str(a, 'event.name') || record.body?.stringValue || '';
        const name = fullName(raw, service);
        const tool = toolOf(name);
        const tokens = tool && tokensOf(name, a);
        if (!tool || !tokens) continue;
        const eventTime = str(a, 'event.timestamp');
        const at =
          nanosToDate(record.timeUnixNano) ??
          (eventTime && !Number.isNaN(Date.parse(eventTime)) ? new Date(eventTime) : undefined) ??
          nanosToDate(record.observedTimeUnixNano) ??
          now;
        const cost = a.cost_usd;
        const duration = a.duration_ms;
        calls.push({
          tool,
          identity: identityOf(
            resource,
            a,
            name,
            record.timeUnixNano ?? '',
            record.observedTimeUnixNano ?? '',
          ),
          at,
          model: str(a, 'model')?.slice(0, 100) ?? null,
          inputTokens: tokens.input,
          outputTokens: tokens.output,
          cacheReadTokens: tokens.cacheRead,
          cacheWriteTokens: tokens.cacheWrite,
          costUsd: typeof cost === 'number' || typeof cost === 'string' ? num(a, 'cost_usd') : null,
          durationMs:
            typeof duration === 'number' || typeof duration === 'string' ? num(a, 'duration_ms') : null,
          sessionId: (str(a, 'session.id') ?? str(a, 'conversation.id') ?? null)?.slice(0, 255) ?? null,
          hostName: str(resource, 'host.name')?.slice(0, 200) ?? null,
        });
      }
    }
  }
  return calls;
}
