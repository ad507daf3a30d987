/**
 * Token estimates for a stream that ended without a usage report (a provider or gateway that never
 * sends one, a stream cut short before it). Tokenizer-free on purpose (no per-model vocabularies):
 *
 *   output tokens = ceil(characters of the generated text / 4)
 *   input tokens  = ceil(characters of every JSON string value in the request body / 4)
 *
 * Four characters per token is the usual rule of thumb for English text and code with the providers'
 * tokenizers. "Generated text" is what the stream's deltas carry (text, tool-call arguments,
 * reasoning), counted by the wire format's reader. A usage built here has `estimated: true`, and the
 * proxy logs it as such.
 */
import { buildUsage, isRecord, type Usage } from './usage.ts';

export const CHARS_PER_TOKEN = 4;

export function estimatedUsage(promptChars: number, outputChars: number, model?: string): Usage {
  return {
    ...buildUsage({
      inputTokens: Math.ceil(promptChars / CHARS_PER_TOKEN),
      outputTokens: Math.ceil(outputChars / CHARS_PER_TOKEN),
      model,
    }),
    estimated: true,
  };
}

/**
 * Characters of the JSON string values that directly follow one of `keys` in a JSON text
 * (`"content": "..."`), escapes counted as one character. Linear: every scan resumes after the last
 * match or value, so no part of `data` is read twice per key.
 */
export function jsonStringValueChars(data: string, keys: readonly string[]): number {
  let total = 0;
  for (const key of keys) {
    const needle = `"${key}"`;
    let from = 0;
    for (;;) {
      const at = data.indexOf(needle, from);
      if (at === -1) break;
      let i = skipSpaces(data, at + needle.length);
      from = i;
      if (data.charCodeAt(i) !== COLON) continue;
      i = skipSpaces(data, i + 1);
      if (data.charCodeAt(i) !== QUOTE) {
        from = i;
        continue;
      }
      i++;
      while (i < data.length) {
        const c = data.charCodeAt(i);
        if (c === QUOTE) break;
        if (c === BACKSLASH) i += data.charCodeAt(i + 1) === LOWER_U ? 6 : 2;
        else i++;
        total++;
      }
      from = i + 1;
    }
  }
  return total;
}

/** Characters of every string value (not keys) in a parsed JSON value; iterative, so depth is free. */
export function stringValueChars(value: unknown): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') total += v.length;
    else if (Array.isArray(v)) for (const item of v) stack.push(item);
    else if (isRecord(v)) for (const key in v) stack.push(v[key]);
  }
  return total;
}

const COLON = 0x3a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LOWER_U = 0x75;

function skipSpaces(s: string, i: number): number {
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}
