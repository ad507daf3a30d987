// Repository-declared runtimes (issue 15 item 5; spec document 2 "Execution isolation": repository-
// declared runtimes take precedence over the service's own runtime), pure: which installed Node
// version runs a repository's CI and pre-commit hook.
//
// Declarations, first match wins: `.nvmrc` (`20`, `v20.11.1`, `20.11`; `lts/*`, `node` and other
// aliases are not versions: ignored), `.tool-versions` (asdf: the `nodejs` or `node` line's first
// version), package.json `engines.node` (a range: `>=18`, `^20.1`, `~20.11`, `20.x`, `18 || 20`; the
// highest installed version inside it). The installed versions are the directories of
// `$SVC_RUNTIMES_DIR/node/<version>/bin` (services/forge/runtimes.ts lists them). No match, or no
// declaration: the service's own runtime, and the note says why (the CI log shows it).
// Linear scans only; no regular expression on repository text beyond fixed, anchored token checks.

export interface RuntimeDeclarations {
  nvmrc: string | null;
  toolVersions: string | null;
  packageJson: string | null;
}

export type RuntimePick =
  | { kind: 'declared'; version: string; source: string; note: string }
  | { kind: 'service'; note: string; declared: string | null };

type Version = [number, number, number];

export function parseVersion(v: string): Version | null {
  const s = v.trim().replace(/^v/, '');
  const parts = s.split('.');
  if (parts.length < 1 || parts.length > 3) return null;
  const nums: number[] = [];
  for (const p of parts) {
    if (!/^[0-9]{1,6}$/.test(p)) return null;
    nums.push(Number(p));
  }
  return [nums[0]!, nums[1] ?? 0, nums[2] ?? 0];
}

function cmp(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** One comparator set (space-separated, all must hold) of a range like `>=18.2 <21`, `^20`, `20.x`. */
function satisfiesSet(v: Version, set: string): boolean | null {
  const tokens = set.trim().split(/\s+/).filter(Boolean);
  if (!tokens.length) return null;
  for (const raw of tokens) {
    let op = '';
    let rest = raw;
    for (const o of ['>=', '<=', '>', '<', '=', '^', '~']) {
      if (rest.startsWith(o)) {
        op = o;
        rest = rest.slice(o.length);
        break;
      }
    }
    const fields = rest.replace(/^v/, '').split('.');
    const wild = (f: string | undefined) => f === undefined || f === 'x' || f === 'X' || f === '*';
    if (wild(fields[0])) {
      if (op) return null;
      continue; // `*` / `x`: any version
    }
    const given = fields.filter((f) => !wild(f)).length; // 1 major, 2 major.minor, 3 full
    const want = parseVersion(fields.slice(0, given).join('.'));
    if (!want) return null;
    const lower = want;
    const upperOf = (k: number): Version =>
      k === 1 ? [want[0] + 1, 0, 0] : k === 2 ? [want[0], want[1] + 1, 0] : [want[0], want[1], want[2] + 1];
    let ok: boolean;
    switch (op) {
      case '>=':
        ok = cmp(v, lower) >= 0;
        break;
      case '>':
        ok = cmp(v, upperOf(given)) >= 0;
        break;
      case '<':
        ok = cmp(v, lower) < 0;
        break;
      case '<=':
        ok = cmp(v, upperOf(given)) < 0;
        break;
      case '^':
        ok =
          cmp(v, lower) >= 0 &&
          cmp(v, want[0] > 0 || given === 1 ? [want[0] + 1, 0, 0] : [0, want[1] + 1, 0]) < 0;
        break;
      case '~':
        ok = cmp(v, lower) >= 0 && cmp(v, upperOf(Math.min(given, 2) === 1 ? 1 : 2)) < 0;
        break;
      default: // `=` or bare: a partial version is a prefix (`20` = 20.x.x)
        ok = cmp(v, lower) >= 0 && cmp(v, upperOf(given)) < 0;
    }
    if (!ok) return false;
  }
  return true;
}

/** Whether `version` is inside `range` (`||` alternatives); null: the range is not understood. */
export function satisfies(version: string, range: string): boolean | null {
  const v = parseVersion(version);
  if (!v) return null;
  let understood = false;
  for (const alt of range.split('||')) {
    const r = satisfiesSet(v, alt);
    if (r === null) continue;
    understood = true;
    if (r) return true;
  }
  return understood ? false : null;
}

/** The declared Node requirement and where it came from (null: nothing declared). */
export function declaredNode(d: RuntimeDeclarations): { range: string; source: string } | null {
  const nvm = d.nvmrc?.split('\n', 1)[0]?.trim();
  if (nvm && parseVersion(nvm)) return { range: nvm.replace(/^v/, ''), source: '.nvmrc' };
  if (d.toolVersions) {
    for (const raw of d.toolVersions.slice(0, 64 * 1024).split('\n')) {
      const [tool, version] = raw.trim().split(/\s+/);
      if ((tool === 'nodejs' || tool === 'node') && version && parseVersion(version))
        return { range: version.replace(/^v/, ''), source: '.tool-versions' };
    }
  }
  if (d.packageJson) {
    try {
      const pkg = JSON.parse(d.packageJson.slice(0, 1024 * 1024)) as { engines?: { node?: unknown } };
      const node = pkg?.engines?.node;
      if (typeof node === 'string' && node.trim() && node.length <= 200)
        return { range: node.trim(), source: 'package.json engines.node' };
    } catch {
      /* an unreadable package.json declares nothing here (CI reports it on its own) */
    }
  }
  return null;
}

/** The installed version for the repository's declaration, or the service's runtime with the reason. */
export function pickNodeRuntime(
  d: RuntimeDeclarations,
  installed: readonly string[],
  serviceVersion: string,
): RuntimePick {
  const decl = declaredNode(d);
  if (!decl)
    return {
      kind: 'service',
      note: `no Node version declared; using the service's Node ${serviceVersion}`,
      declared: null,
    };
  const matching = installed
    .map((v) => ({ v, parsed: parseVersion(v) }))
    .filter((x): x is { v: string; parsed: Version } => x.parsed !== null)
    .filter((x) => satisfies(x.v, decl.range) === true)
    .sort((a, b) => cmp(b.parsed, a.parsed));
  const best = matching[0];
  if (best)
    return {
      kind: 'declared',
      version: best.v,
      source: decl.source,
      note: `Node ${best.v} (declared ${decl.range} in ${decl.source})`,
    };
  const understood = satisfies(serviceVersion, decl.range) !== null;
  return {
    kind: 'service',
    declared: decl.range,
    note: `${decl.source} declares Node ${decl.range}${understood ? '' : ' (a range this service does not understand)'}, not installed under the runtimes directory (${installed.length ? installed.join(', ') : 'none'}); using the service's Node ${serviceVersion}`,
  };
}
