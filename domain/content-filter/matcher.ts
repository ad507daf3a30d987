// A tenant's compiled rules as one matcher (issue 31 item 2): a text is checked against every rule in
// one pass instead of one test per rule. Pure (the regex engines are WebAssembly memory: dispose()).
//   keyword rules  one Aho-Corasick automaton over the lower-cased needles, run on the lower-cased
//                  text: exactly today's "case-insensitive substring" (String#toLowerCase on both).
//                  Below KEYWORD_AUTOMATON_MIN keywords, String#includes per keyword instead: V8's
//                  native substring search beats a JavaScript loop over every character when there
//                  are few needles (bench/content-filter: 10 keywords 3.7 vs 24.5 us on 2.5 KB).
//   regex rules    RE2 alternations of up to REGEX_GROUP rules, `(?:p1)|(?:p2)|...`: a text matches the
//                  alternation iff it matches one of them (each group keeps its own inline flags, and
//                  without the m flag ^ and $ mean the same inside a group), so a clean text costs
//                  one linear-time RE2 pass per group; only a group that matched tests its rules one
//                  by one to name them (each RE2 call costs tens of microseconds in re2-wasm, whatever
//                  the pattern, so fewer calls is most of the gain). A group RE2 refuses as a whole
//                  (duplicate group names, its memory budget) is split in halves until it compiles.
// The result is the reference checkText's (domain/content-filter/rules.ts): the same matches in the
// same (rule) order and the same verdict.
import { type NeedleSet, needleSet } from './aho-corasick.ts';
import {
  type CompiledRule,
  compileRegex,
  type FilterMatch,
  type FilterVerdict,
  freeRegex,
  matchOf,
  verdictOf,
} from './rules.ts';

/** From this many keyword rules on, one automaton; fewer are searched one by one (natively). */
export const KEYWORD_AUTOMATON_MIN = 64;

/** Regex rules per combined RE2 program (bounded so each stays within RE2's memory budget). */
export const REGEX_GROUP = 128;

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

/**
 * The regex rules (indexes into `rules`) in groups of at most REGEX_GROUP, each one RE2 program; a
 * group RE2 refuses whole (duplicate group names, its memory budget) is split in halves, down to
 * single rules (tested alone).
 */
function regexGroups(rules: readonly CompiledRule[], indexes: readonly number[]): RegexGroup[] {
  const groups: RegexGroup[] = [];
  const add = (members: number[]) => {
    if (members.length === 1) {
      groups.push({ members, combined: null });
      return;
    }
    try {
      const combined = compileRegex(members.map((i) => `(?:${rules[i]!.rule.pattern})`).join('|'));
      groups.push({ members, combined });
    } catch {
      const half = Math.ceil(members.length / 2);
      add(members.slice(0, half));
      add(members.slice(half));
    }
  };
  for (let at = 0; at < indexes.length; at += REGEX_GROUP) add(indexes.slice(at, at + REGEX_GROUP));
  return groups;
}

/** `keywordAutomatonMin`: tests set it to 1 to run the automaton on a few keywords. */
export function compileMatcher(
  rules: readonly CompiledRule[],
  { keywordAutomatonMin = KEYWORD_AUTOMATON_MIN } = {},
): RuleMatcher {
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
  const keywords: NeedleSet | null =
    needles.length === 0
      ? null
      : needles.length >= keywordAutomatonMin
        ? needleSet(needles, keywordIds)
        : {
            scan(text, found) {
              for (let j = 0; j < needles.length; j++) if (text.includes(needles[j]!)) found(keywordIds[j]!);
            },
          };
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
