// Content filter rules (spec document 2, "Governance and content"; issue 11 item 1), pure: compiling a
// rule, checking a text against a tenant's rules and the verdict.
//
// Keyword rules are a case-insensitive substring test (no regular expression at all). Regex rules run
// on RE2 (re2-wasm: Google's RE2 compiled to WebAssembly, no native build needed), a linear-time
// engine without backtracking: a "regex bomb" such as `(a+)+$` runs in time linear in the input, and
// the constructs that need backtracking (backreferences, lookarounds) are refused by the engine at
// compile time, which the API reports as a 400 naming the problem. Input is still capped (the check
// endpoint takes at most MAX_CONTENT_BYTES) and so is the pattern (MAX_PATTERN_LENGTH).
import { RE2 } from 're2-wasm';

type Re2 = RE2;

export const FILTER_RULE_TYPES = ['keyword', 'regex'] as const;
export const FILTER_SEVERITIES = ['low', 'medium', 'high'] as const;
export const FILTER_ACTIONS = ['warn', 'block', 'review'] as const;
export type FilterRuleType = (typeof FILTER_RULE_TYPES)[number];
export type FilterSeverity = (typeof FILTER_SEVERITIES)[number];
export type FilterAction = (typeof FILTER_ACTIONS)[number];
export type FilterVerdict = 'blocked' | 'review' | 'warn' | 'clean';

/** The longest pattern accepted. */
export const MAX_PATTERN_LENGTH = 1_000;
/** The most content POST /api/content/check accepts (UTF-8 bytes); more is a 413. */
export const MAX_CONTENT_BYTES = 100 * 1024;

export interface FilterRule {
  id: number;
  pattern: string;
  type: FilterRuleType;
  severity: FilterSeverity;
  action: FilterAction;
  description: string | null;
  isEnabled: boolean;
  tenantId: number | null;
}

export interface FilterMatch {
  rule_id: number;
  type: FilterRuleType;
  severity: FilterSeverity;
  action: FilterAction;
  description: string | null;
}

/** A rule ready to test: keyword lower-cased once, regex compiled once. */
export interface CompiledRule {
  rule: FilterRule;
  /** `lower` is the text lower-cased (for keyword rules), computed once per check. */
  test(text: string, lower: string): boolean;
  /** Frees the engine's memory (WebAssembly heap) of a regex rule. */
  dispose(): void;
}

export class InvalidPatternError extends Error {}

export function compileRegex(pattern: string): Re2 {
  try {
    return new RE2(pattern, 'u');
  } catch (error) {
    // RE2's message names the construct: "invalid perl operator: (?=", "invalid escape sequence: \1".
    const text = (error as Error).message;
    const colon = text.indexOf(': ', text.lastIndexOf('/'));
    throw new InvalidPatternError(
      `Invalid regex pattern: ${colon === -1 ? text : text.slice(colon + 2)} (RE2 syntax; backreferences and lookarounds are not supported)`,
    );
  }
}

export function freeRegex(re: Re2): void {
  (re as unknown as { wrapper?: { delete?: () => void } }).wrapper?.delete?.();
}

/** The problem with a pattern of this type, or null when it can be compiled. */
export function patternProblem(type: FilterRuleType, pattern: string): string | null {
  if (pattern.trim() === '') return 'pattern must not be empty';
  if (pattern.length > MAX_PATTERN_LENGTH) return `pattern is longer than ${MAX_PATTERN_LENGTH} characters`;
  if (type === 'keyword') return null;
  try {
    freeRegex(compileRegex(pattern));
    return null;
  } catch (error) {
    if (error instanceof InvalidPatternError) return error.message;
    throw error;
  }
}

export function compileRule(rule: FilterRule): CompiledRule {
  if (rule.type === 'keyword') {
    const needle = rule.pattern.toLowerCase();
    return { rule, test: (_text, lower) => lower.includes(needle), dispose: () => {} };
  }
  const re = compileRegex(rule.pattern);
  return { rule, test: (text) => re.test(text), dispose: () => freeRegex(re) };
}

/** Compiles every enabled rule; a stored rule that no longer compiles is skipped (and reported). */
export function compileRules(
  rules: readonly FilterRule[],
  onInvalid: (rule: FilterRule, problem: string) => void = () => {},
): CompiledRule[] {
  const out: CompiledRule[] = [];
  for (const rule of rules) {
    if (!rule.isEnabled) continue;
    try {
      out.push(compileRule(rule));
    } catch (error) {
      if (!(error instanceof InvalidPatternError)) throw error;
      onInvalid(rule, error.message);
    }
  }
  return out;
}

/** blocked when any block rule matched, else review, else warn, else clean. */
export function verdictOf(matches: readonly Pick<FilterMatch, 'action'>[]): FilterVerdict {
  let verdict: FilterVerdict = 'clean';
  for (const m of matches) {
    if (m.action === 'block') return 'blocked';
    if (m.action === 'review') verdict = 'review';
    else if (verdict === 'clean') verdict = 'warn';
  }
  return verdict;
}

/** The match a rule reports. */
export function matchOf(r: FilterRule): FilterMatch {
  return { rule_id: r.id, type: r.type, severity: r.severity, action: r.action, description: r.description };
}

/**
 * Every compiled rule the text matches, and the verdict, testing the rules one by one: the reference
 * (tests compare the one-pass matcher of domain/content-filter/matcher.ts with it, and bench/
 * content-filter measures both); the services check through that matcher.
 */
export function checkText(
  rules: readonly CompiledRule[],
  text: string,
): { verdict: FilterVerdict; matches: FilterMatch[] } {
  if (rules.length === 0) return { verdict: 'clean', matches: [] };
  const lower = text.toLowerCase();
  const matches: FilterMatch[] = [];
  for (const c of rules) if (c.test(text, lower)) matches.push(matchOf(c.rule));
  return { verdict: verdictOf(matches), matches };
}

/** The alert severity of a rule's severity (alerts use info / warning / critical). */
export function alertSeverityOf(severity: FilterSeverity): 'info' | 'warning' | 'critical' {
  return severity === 'high' ? 'critical' : severity === 'medium' ? 'warning' : 'info';
}

/** The most severe of several rule severities. */
export function highestSeverity(severities: readonly FilterSeverity[]): FilterSeverity {
  let best: FilterSeverity = 'low';
  for (const s of severities) if (FILTER_SEVERITIES.indexOf(s) > FILTER_SEVERITIES.indexOf(best)) best = s;
  return best;
}
