/**
 * Provider error bodies that echo the stored key. OpenAI answers a bad key with
 * `Incorrect API key provided: sk-abc1***************xyz9`, a masked key whose prefix and suffix are
 * real characters of the tenant's secret; some gateways echo the key whole. The proxy relays error
 * bodies only after `removeKeyEchoes` has replaced every such fragment with `[redacted]`.
 *
 * A hand-written linear scan, not a regex: a pattern such as /[\w-]*\*{3,}[\w-]*\/ backtracks
 * quadratically over a long run of word characters, and the body comes from outside.
 */
const REDACTED = '[redacted]';
/** A masked key shows at least this many stars in a row. */
const MIN_STARS = 3;

/** Characters that make up API keys (and their visible prefix/suffix in a masked form). */
function isKeyChar(c: number): boolean {
  return (
    (c >= 48 && c <= 57) || // 0-9
    (c >= 65 && c <= 90) || // A-Z
    (c >= 97 && c <= 122) || // a-z
    c === 45 || // -
    c === 95 // _
  );
}

/**
 * The body with masked keys (a run of 3+ `*` and the key characters around it) and the given full
 * secrets replaced by `[redacted]`.
 */
export function removeKeyEchoes(body: string, secrets: readonly string[]): string {
  let text = body;
  for (const secret of secrets) if (secret.length >= 8) text = text.split(secret).join(REDACTED);
  if (!text.includes('***')) return text;

  let out = '';
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    if (text.charCodeAt(i) !== 42) {
      i++;
      continue;
    }
    let end = i;
    while (end < text.length && text.charCodeAt(end) === 42) end++;
    if (end - i >= MIN_STARS) {
      let start = i;
      while (start > copied && isKeyChar(text.charCodeAt(start - 1))) start--;
      let stop = end;
      // Stars may interleave with visible characters; swallow runs of either.
      while (stop < text.length && (isKeyChar(text.charCodeAt(stop)) || text.charCodeAt(stop) === 42)) stop++;
      out += text.slice(copied, start) + REDACTED;
      copied = stop;
      end = stop;
    }
    i = end;
  }
  return out + text.slice(copied);
}

/** The secrets in the provider auth headers (`Bearer sk-…` → `sk-…`), to remove whole echoes too. */
export function secretsOf(providerAuth: Readonly<Record<string, string>>): string[] {
  return Object.values(providerAuth).map((v) => (v.startsWith('Bearer ') ? v.slice(7) : v));
}
