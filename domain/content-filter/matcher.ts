// A tenant's compiled rules as one matcher (issue 31 item 2): a text is checked against every rule in
// one pass instead of one test per rule. Pure (the regex engines are WebAssembly memory: dispose()).
//   keyword rules  one Aho-Corasick automaton over the lower-cased needles, run on the lower-cased
//                  text: exactly today's "case-insensitive substring" (String#toLowerCase on both).
//   regex rules    RE2 alternations of REGEX_GROUP rules, `(?:p1)|(?:p2)|...`: a text matches the
//                  alternation iff it matches one of them (each group keeps its own inline flags, and
//                  without the m flag ^ and $ mean the same inside a group), so a clean text costs
//                  one linear-time RE2 pass per group; only a group that matched tests its rules one
//                  by one to name them. A group RE2 refuses as a whole (duplicate group names, its
//                  memory budget) stays rule by rule.
// The result is the reference checkText's (domain/content-filter/rules.ts): the same matches in the
// same (rule) order and the same verdict.
import { needleSet } from './aho-corasick.ts';
import {
  type CompiledRule,
  compileRegex,
  type FilterMatch,
  type FilterVerdict,
  freeRegex,
  matchOf,
  verdictOf,
} from './rules.ts';

/** Regex rules per combined RE2 program (bounded so each stays within RE2's memory budget). */
export const REGEX_GROUP = 32;

export interface RuleMatcher {
  readonly rules: readonly CompiledRule[];
  check(text: string): { verdict: FilterVerdict; matches: FilterMatch[] };
  /** Frees the combined regex programs (not the rules' own: their owner disposes them). */
  dispose(): void;
}

interface RegexGroup {
  /** Indexes into `rules`. */
  members: number[];
  combined: ReturnType<typeof compileRegex> | null;
}

function regexGroups(rules: readonly CompiledRule[], indexes: readonly number[]): RegexGroup[] {
  const groups: RegexGroup[] = [];
  for (let at = 0; at < indexes.length; at += REGEX_GROUP) {
    const members = indexes.slice(at, at + REGEX_GROUP);
    let combined: RegexGroup['combined'] = null;
    if (members.length > 1) {
      try {
        combined = compileRegex(members.map((i) => `(?:${rules[i]!.rule.pattern})`).join('|'));
      } catch {
        combined = null;
      }
    }
    groups.push({ members, combined });
  }
  return groups;
}

export function compileMatcher(rules: readonly CompiledRule[]): RuleMatcher {
  const keywordIds: number[] = [];
  const needles: string[] = [];
  const regexIds: number[] = [];
  /** Keyword rules whose lower-cased pattern is empty: they match every text, as includes('') does. */
  const always: number[] = [];
  rules.forEach((c, i) => {
    const needle = c.rule.type === 'keyword' ? c.rule.pattern.toLowerCase() : null;
    if (needle === null) regexIds.push(i);
    else if (needle === '') always.push(i);
    else {
      keywordIds.push(i);
      needles.push(needle);
    }
  });
  const keywords = needles.length > 0 ? needleSet(needles, keywordIds) : null;
  const groups = regexGroups(rules, regexIds);
  return {
    rules,
    check(text) {
      if (rules.length === 0) return { verdict: 'clean', matches: [] };
      let hit: Uint8Array | undefined;
      const mark = (i: number) => {
        hit ??= new Uint8Array(rules.length);
        hit[i] = 1;
      };
      for (const i of always) mark(i);
      keywords?.scan(text.toLowerCase(), mark);
      for (const g of groups) {
        if (g.combined !== null && !g.combined.test(text)) continue;
        for (const i of g.members) if (rules[i]!.test(text, text)) mark(i);
      }
      if (hit === undefined) return { verdict: 'clean', matches: [] };
      const matches: FilterMatch[] = [];
      for (let i = 0; i < rules.length; i++) if (hit[i] === 1) matches.push(matchOf(rules[i]!.rule));
      return { verdict: verdictOf(matches), matches };
    },
    dispose() {
      for (const g of groups) if (g.combined !== null) freeRegex(g.combined);
    },
  };
}
