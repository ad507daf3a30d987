// Installed runtimes for repository-declared versions (issue 15 item 5; the pick itself is pure:
// domain/forge/runtime-pick.ts). Documented place: `$SVC_RUNTIMES_DIR/node/<version>/bin/node`
// (setting SVC_RUNTIMES_DIR; e.g. unpacked nodejs.org tarballs renamed to their version). The CI
// runner and the pre-commit hook put the picked `bin` first on PATH; when the declared version is not
// installed they keep the service's own runtime and say so in the log.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pickNodeRuntime, type RuntimeDeclarations } from '../../domain/forge/runtime-pick.ts';

export interface RuntimeChoice {
  /** Directory to put first on PATH (null: the service's own runtime). */
  pathPrefix: string | null;
  /** A line for the log ([svc] note), or null when nothing was declared. */
  note: string | null;
}

/** Versions with an executable `node` under `<dir>/node/<version>/bin` (sorted as listed). */
export function installedNodeVersions(runtimesDir: string | null | undefined): string[] {
  if (!runtimesDir) return [];
  const root = path.join(runtimesDir, 'node');
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  return names.filter((v) => existsSync(path.join(root, v, 'bin', 'node'))).sort();
}

export function nodeRuntimeFor(
  d: RuntimeDeclarations,
  runtimesDir: string | null | undefined,
): RuntimeChoice {
  const pick = pickNodeRuntime(d, installedNodeVersions(runtimesDir), process.versions.node);
  if (pick.kind === 'declared')
    return {
      pathPrefix: path.join(runtimesDir!, 'node', pick.version, 'bin'),
      note: `runtime: ${pick.note}`,
    };
  return { pathPrefix: null, note: pick.declared === null ? null : `runtime: ${pick.note}` };
}
