// Aho-Corasick over UTF-16 code units (issue 31 item 2): every needle found in a text in one pass,
// O(text + needles' total length + matches), whatever the number of needles. Written here rather
// than taken from npm: of the packages, ahocorasick and aho-corasick are unmaintained; the maintained
// modern-ahocorasick (3.3.0) would fit, but it is not installed, and a new dependency in the lock
// file several branches edit costs more than these ~120 lines (a dense table, one array read per
// character, tested against the rule-by-rule reference and measured in bench/content-filter).
//
// The table: the code units the needles use are numbered 1..k (class 0 = any other unit, which from
// every state leads back to the root), and delta[state * (k + 1) + class] is the full transition
// (failure links folded in at build time; stored as the target's row offset, negative when a needle
// ends there), so the scan never loops on failure links. A table that
// would pass MAX_TABLE_CELLS is split: the needles go into several automata, each scanned once.
// Pure; the caller lower-cases texts and needles alike when it wants case-insensitive matching.

/** Cells (states x classes) one automaton's table may hold (4 bytes each: 16 MB). */
export const MAX_TABLE_CELLS = 4 * 1024 * 1024;

interface Automaton {
  /** Class of a code unit below 128 (the common case), else looked up in `wide`. */
  ascii: Int32Array;
  wide: Map<number, number>;
  width: number;
  delta: Int32Array;
  /** Per state: the needle ids that end there, including through suffix (output) links. */
  out: (readonly number[] | undefined)[];
}

function classesOf(needles: readonly string[]) {
  const ascii = new Int32Array(128);
  const wide = new Map<number, number>();
  let k = 0;
  for (const n of needles)
    for (let i = 0; i < n.length; i++) {
      const c = n.charCodeAt(i);
      if (c < 128) {
        if (ascii[c] === 0) ascii[c] = ++k;
      } else if (!wide.has(c)) wide.set(c, ++k);
    }
  return { ascii, wide, width: k + 1 };
}

function build(needles: readonly string[], ids: readonly number[]): Automaton {
  const { ascii, wide, width } = classesOf(needles);
  const classOf = (c: number) => (c < 128 ? ascii[c]! : (wide.get(c) ?? 0));
  // The trie, as sparse children first (states are numbered in creation order).
  const children: Map<number, number>[] = [new Map()];
  const ends: number[][] = [[]];
  needles.forEach((needle, j) => {
    let s = 0;
    for (let i = 0; i < needle.length; i++) {
      const cls = classOf(needle.charCodeAt(i));
      let next = children[s]!.get(cls);
      if (next === undefined) {
        next = children.length;
        children.push(new Map());
        ends.push([]);
        children[s]!.set(cls, next);
      }
      s = next;
    }
    ends[s]!.push(ids[j]!);
  });
  // Breadth first: a state's failure target is shallower, so its row and outputs are final.
  const delta = new Int32Array(children.length * width);
  const fail = new Int32Array(children.length);
  const out: (readonly number[] | undefined)[] = new Array(children.length);
  const queue: number[] = [];
  for (const [cls, child] of children[0]!) {
    delta[cls] = child;
    queue.push(child);
  }
  for (let q = 0; q < queue.length; q++) {
    const s = queue[q]!;
    const f = fail[s]!;
    const own = ends[s]!;
    const inherited = out[f];
    out[s] = own.length === 0 ? inherited : inherited === undefined ? own : [...own, ...inherited];
    const row = s * width;
    const failRow = f * width;
    for (let cls = 0; cls < width; cls++) delta[row + cls] = delta[failRow + cls]!;
    for (const [cls, child] of children[s]!) {
      delta[row + cls] = child;
      fail[child] = delta[failRow + cls]!;
      queue.push(child);
    }
  }
  // The scan's form: each entry is the target's row offset (no multiply per character), negated
  // (-offset - 1) when the target is where a needle ends (one sign test per character).
  for (let i = 0; i < delta.length; i++) {
    const target = delta[i]!;
    delta[i] = out[target] === undefined ? target * width : -(target * width) - 1;
  }
  return { ascii, wide, width, delta, out };
}

export interface NeedleSet {
  /** Calls `found(id)` for each needle occurring in `text` (an id may be reported more than once). */
  scan(text: string, found: (id: number) => void): void;
}

/** The needles (non-empty strings) and their ids, compiled into one automaton or a few. */
export function needleSet(
  needles: readonly string[],
  ids: readonly number[] = needles.map((_, i) => i),
  maxCells = MAX_TABLE_CELLS,
): NeedleSet {
  const automata: Automaton[] = [];
  // Groups of consecutive needles whose table fits (a group has at least one needle); the cells are
  // bounded by (units + 1) * (classes + 1), counted as the group grows.
  let start = 0;
  let units = 0;
  let seen = new Set<number>();
  for (let j = 0; j <= needles.length; j++) {
    const needle = needles[j];
    if (needle !== undefined) {
      const grown = new Set(seen);
      for (let i = 0; i < needle.length; i++) grown.add(needle.charCodeAt(i));
      const fits = (units + needle.length + 1) * (grown.size + 1) <= maxCells;
      if (fits || j === start) {
        units += needle.length;
        seen = grown;
        continue;
      }
    }
    if (j > start) automata.push(build(needles.slice(start, j), ids.slice(start, j)));
    start = j;
    units = needle?.length ?? 0;
    seen = new Set(
      needle === undefined ? [] : Array.from({ length: needle.length }, (_, i) => needle.charCodeAt(i)),
    );
  }
  return {
    scan(text, found) {
      for (const a of automata) {
        const { ascii, wide, width, delta, out } = a;
        let row = 0;
        for (let i = 0; i < text.length; i++) {
          const c = text.charCodeAt(i);
          const next = delta[row + (c < 128 ? ascii[c]! : (wide.get(c) ?? 0))]!;
          if (next >= 0) {
            row = next;
            continue;
          }
          row = -next - 1;
          for (const id of out[row / width]!) found(id);
        }
      }
    },
  };
}
