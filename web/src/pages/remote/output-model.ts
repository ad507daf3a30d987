// Pure shaping of a remote session's output for the session page (DOM-free, unit-tested in
// test/unit/web-remote-output.test.ts). The API numbers every output event with a gap-free
// `event_index` per session, and the SSE stream (GET /api/remote/sessions/:id/output/stream) sends it
// as the event id: the page merges whatever arrives (replay after a reload, EventSource's own
// Last-Event-ID resume, a late duplicate) by that index, so nothing is lost or shown twice.

export interface OutputEvent {
  event_index: number;
  stream: string;
  data: string;
  timestamp: string;
}

/** `incoming` merged into `existing` (sorted by event_index), each index once; `existing` wins on ties. */
export function mergeOutput(
  existing: readonly OutputEvent[],
  incoming: readonly OutputEvent[],
): OutputEvent[] {
  if (!incoming.length) return existing as OutputEvent[];
  const last = existing.length ? existing[existing.length - 1]!.event_index : -1;
  // The common case: strictly newer events in order; append without rebuilding.
  let inOrder = true;
  let prev = last;
  for (const e of incoming) {
    if (e.event_index <= prev) {
      inOrder = false;
      break;
    }
    prev = e.event_index;
  }
  if (inOrder) return [...existing, ...incoming];
  const byIndex = new Map<number, OutputEvent>();
  for (const e of incoming) if (!byIndex.has(e.event_index)) byIndex.set(e.event_index, e);
  for (const e of existing) byIndex.set(e.event_index, e);
  return [...byIndex.values()].sort((a, b) => a.event_index - b.event_index);
}

/** The next index to ask for (`?from=`): one past the highest index held, 0 when none. */
export function nextIndex(events: readonly OutputEvent[]): number {
  return events.length ? events[events.length - 1]!.event_index + 1 : 0;
}

export type LineKind = 'assistant' | 'result' | 'system' | 'stderr' | 'permission' | 'text';

export interface OutputLine {
  index: number;
  kind: LineKind;
  text: string;
  timestamp: string;
}

export interface PermissionPrompt {
  index: number;
  requestId: string;
  tool: string;
  input: string;
}

function parseObject(text: string): Record<string, any> | null {
  if (!text.startsWith('{')) return null;
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/** Text parts of a stream-json assistant message (`message.content` as a string or as blocks). */
function assistantText(event: Record<string, any>): string {
  const content = event.message?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b: any) => {
      if (b?.type === 'text' && typeof b.text === 'string') return b.text;
      if (b?.type === 'tool_use' && typeof b.name === 'string') return `[tool: ${b.name}]`;
      return '';
    })
    .filter(Boolean)
    .join('\n');
}

/** A permission request line (Claude-Code `control_request` / `can_use_tool`), or null. */
export function permissionOf(e: OutputEvent): PermissionPrompt | null {
  if (e.stream !== 'permission') return null;
  const p = parseObject(e.data);
  if (!p || typeof p.request_id !== 'string') return null;
  const req = p.request ?? {};
  let input = '';
  try {
    input = req.input === undefined ? '' : JSON.stringify(req.input);
  } catch {}
  return {
    index: e.event_index,
    requestId: p.request_id,
    tool: typeof req.tool_name === 'string' ? req.tool_name : 'a tool',
    input,
  };
}

/**
 * One readable line per event, or null for protocol lines nobody needs to read (init, bare usage).
 * Unknown JSON and plain text are shown as they are, so nothing the CLI printed is hidden silently.
 */
export function describeEvent(e: OutputEvent): OutputLine | null {
  const base = { index: e.event_index, timestamp: e.timestamp };
  if (e.stream === 'stderr') return { ...base, kind: 'stderr', text: e.data };
  if (e.stream === 'permission') {
    const p = permissionOf(e);
    return { ...base, kind: 'permission', text: p ? `Permission asked for ${p.tool}` : e.data };
  }
  const obj = parseObject(e.data);
  if (e.stream === 'system') {
    if (!obj) return { ...base, kind: 'system', text: e.data };
    const what = typeof obj.event === 'string' ? obj.event : 'note';
    const detail =
      typeof obj.message === 'string' ? obj.message : typeof obj.error === 'string' ? obj.error : '';
    return { ...base, kind: 'system', text: detail ? `${what}: ${detail}` : what };
  }
  if (!obj) return { ...base, kind: 'text', text: e.data };
  if (obj.type === 'assistant') {
    const text = assistantText(obj);
    return text ? { ...base, kind: 'assistant', text } : null;
  }
  if (obj.type === 'system' && obj.subtype === 'init') return null;
  if (obj.type === 'result') {
    const failed = obj.is_error === true || String(obj.subtype ?? '').startsWith('error');
    return {
      ...base,
      kind: 'result',
      text: failed ? `Turn failed: ${obj.result ?? obj.subtype}` : 'Turn finished',
    };
  }
  if (obj.type === 'user') return null;
  return { ...base, kind: 'text', text: e.data };
}

/** Permission prompts still waiting for an answer (those not in `answered`), oldest first. */
export function pendingPermissions(
  events: readonly OutputEvent[],
  answered: ReadonlySet<string>,
): PermissionPrompt[] {
  const out: PermissionPrompt[] = [];
  for (const e of events) {
    const p = permissionOf(e);
    if (p && !answered.has(p.requestId)) out.push(p);
  }
  return out;
}
