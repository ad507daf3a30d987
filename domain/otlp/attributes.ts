// Reading decoded OTLP objects (services/otlp/codec.ts: protobufjs toObject, lowerCamelCase, 64-bit
// integers as decimal strings). Pure helpers shared by the logs and metrics mappings.
import { createHash } from 'node:crypto';

export type AttrValue = string | number | boolean;
export type Attrs = Record<string, AttrValue>;

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}

/** A KeyValue list as a record of its scalar values (arrays, maps and bytes are not used here). */
export function attrsOf(list: unknown): Attrs {
  const out: Attrs = {};
  if (!Array.isArray(list)) return out;
  for (const kv of list as Array<{ key?: string; value?: AnyValue }>) {
    const v = kv?.value;
    if (!kv?.key || !v) continue;
    if (v.stringValue !== undefined) out[kv.key] = v.stringValue;
    else if (v.intValue !== undefined) out[kv.key] = Number(v.intValue);
    else if (v.doubleValue !== undefined) out[kv.key] = v.doubleValue;
    else if (v.boolValue !== undefined) out[kv.key] = v.boolValue;
  }
  return out;
}

/** A non-negative finite number from an attribute (a string of digits counts), else 0. */
export function num(attrs: Attrs, key: string): number {
  const v = attrs[key];
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

export function str(attrs: Attrs, key: string): string | undefined {
  const v = attrs[key];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/** Nanoseconds since the epoch (a decimal string) as a Date; undefined for 0 or garbage. */
export function nanosToDate(nanos: unknown): Date | undefined {
  if (typeof nanos !== 'string' && typeof nanos !== 'number') return undefined;
  const s = String(nanos);
  if (!/^\d{1,20}$/.test(s) || /^0+$/.test(s)) return undefined;
  const ms = Number(BigInt(s) / 1_000_000n);
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}

/** A stable digest of attribute records (key order does not matter). */
export function identityOf(...parts: unknown[]): string {
  const canonical = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
        )
      : v;
  return createHash('sha256')
    .update(JSON.stringify(parts.map(canonical)))
    .digest('hex')
    .slice(0, 40);
}

/** The CLIs whose telemetry is read, by the prefix of their event and metric names. */
export const OTEL_TOOLS = [
  { prefix: 'claude_code.', tool: 'claude-code', service: 'claude-code' },
  { prefix: 'codex.', tool: 'codex', service: 'codex' },
  { prefix: 'gemini_cli.', tool: 'gemini-cli', service: 'gemini-cli' },
  { prefix: 'qwen-code.', tool: 'qwen-code', service: 'qwen-code' },
] as const;
export type OtelTool = (typeof OTEL_TOOLS)[number]['tool'];

/**
 * The full name of an event or metric (`claude_code.api_request`): Claude Code puts the bare name in
 * `event.name` and the full one in the body, so a bare name takes the prefix of the resource's service.
 */
export function fullName(name: string, serviceName: string | undefined): string {
  if (OTEL_TOOLS.some((t) => name.startsWith(t.prefix))) return name;
  const byService = OTEL_TOOLS.find((t) => serviceName?.startsWith(t.service));
  return byService ? byService.prefix + name : name;
}

export function toolOf(name: string): OtelTool | undefined {
  return OTEL_TOOLS.find((t) => name.startsWith(t.prefix))?.tool;
}
