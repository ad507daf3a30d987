// Serves the agent program to installers (`GET /api/remote/agent/files/<path>`) and renders the
// install scripts (`GET /api/remote/agent/install.sh|ps1`).
//
// The agent is written in TypeScript with `.ts` import specifiers; machines get plain ESM `.js`
// transpiled here with esbuild (target node18) and a package.json that marks the folder as ESM.
// Security: a request path is only ever looked up in the list built at load time; it is never
// joined onto the filesystem, so `../` and friends simply do not match. `manifest.json` lists every
// file with the SHA-256 of the exact bytes served; the install scripts refuse a file that does not match.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const AGENT_DIR = fileURLToPath(new URL('../agent/', import.meta.url));
const INSTALL_DIR = fileURLToPath(new URL('../agent/install/', import.meta.url));
const DOCS = ['README.md', 'PROTOCOL.md'];

// Without it Node 18 would read the .js files as CommonJS.
const PACKAGE_JSON = JSON.stringify({ name: 'svc-agent', private: true, type: 'module' }, null, 2) + '\n';

export interface AgentFile {
  contentType: string;
  body: string;
}

type Source =
  | { kind: 'ts'; file: string }
  | { kind: 'doc'; file: string }
  | { kind: 'js'; file: string }
  | { kind: 'package' };

/** relative path served -> where it comes from; built once, the only door to the filesystem. */
const SOURCES: ReadonlyMap<string, Source> = (() => {
  const map = new Map<string, Source>([['package.json', { kind: 'package' }]]);
  for (const name of readdirSync(AGENT_DIR).sort()) {
    if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) {
      map.set(name.slice(0, -3) + '.js', { kind: 'ts', file: AGENT_DIR + name });
    }
    // Plain JavaScript served as it is (the sandbox's inner launcher, run by a bare `node`).
    if (name.endsWith('.mjs')) map.set(name, { kind: 'js', file: AGENT_DIR + name });
  }
  for (const doc of DOCS)
    if (existsSync(AGENT_DIR + doc)) map.set(doc, { kind: 'doc', file: AGENT_DIR + doc });
  return map;
})();

/** Files the installer downloads into the install directory (flat, relative names). */
export function listAgentFiles(): string[] {
  return [...SOURCES.keys()];
}

// Files ship with the server release, so transpiling once per process is enough.
const cache = new Map<string, Promise<AgentFile>>();

/** Served next to the agent files; not installed itself. */
export const MANIFEST_FILE = 'manifest.json';

export interface AgentManifest {
  files: { path: string; sha256: string }[];
}

/** Every agent file with the SHA-256 (hex) of its served UTF-8 bytes, in listAgentFiles() order. */
export async function agentManifest(): Promise<AgentManifest> {
  const files = await Promise.all(
    listAgentFiles().map(async (path) => {
      const file = (await loadAgentFile(path))!;
      return { path, sha256: createHash('sha256').update(file.body, 'utf8').digest('hex') };
    }),
  );
  return { files };
}

/** The file for an installer request (or the manifest), or null for anything not in listAgentFiles(). */
export function loadAgentFile(relPath: string): Promise<AgentFile | null> {
  if (relPath === MANIFEST_FILE)
    return agentManifest().then((m) => ({
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify(m, null, 2) + '\n',
    }));
  const source = SOURCES.get(relPath);
  if (!source) return Promise.resolve(null);
  let pending = cache.get(relPath);
  if (!pending) {
    pending = build(relPath, source);
    // A failed build must not stay cached.
    pending.catch(() => cache.delete(relPath));
    cache.set(relPath, pending);
  }
  return pending;
}

async function build(relPath: string, source: Source): Promise<AgentFile> {
  if (source.kind === 'package')
    return { contentType: 'application/json; charset=utf-8', body: PACKAGE_JSON };
  const text = readFileSync(source.file, 'utf8');
  if (source.kind === 'doc') return { contentType: 'text/markdown; charset=utf-8', body: text };
  if (source.kind === 'js') return { contentType: 'text/javascript; charset=utf-8', body: text };
  // esbuild is loaded here, on the first agent download, not by every process that imports the app.
  const { transform } = await import('esbuild');
  const result = await transform(text, {
    loader: 'ts',
    format: 'esm',
    target: 'node18',
    sourcefile: relPath,
  });
  return { contentType: 'text/javascript; charset=utf-8', body: rewriteTsSpecifiers(result.code) };
}

// `from './x.ts'`, `import './x.ts'`, `import('./x.ts')` -> `.js`; bare and absolute specifiers untouched.
const RELATIVE_TS_SPECIFIER = /(\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.\.?\/[^'"\n]*?)\.ts\2/g;

export function rewriteTsSpecifiers(code: string): string {
  return code.replace(RELATIVE_TS_SPECIFIER, (_match, lead: string, quote: string, spec: string) => {
    return `${lead}${quote}${spec}.js${quote}`;
  });
}

// --- install scripts -----------------------------------------------------------------------------

export type InstallScriptKind = 'sh' | 'ps1';

export const INSTALL_SCRIPT_CONTENT_TYPE: Record<InstallScriptKind, string> = {
  sh: 'text/x-shellscript; charset=utf-8',
  ps1: 'text/plain; charset=utf-8',
};

const templates = new Map<InstallScriptKind, string>();

/** The raw template (placeholders __SVC_SERVER_URL__ and __SVC_AGENT_FILES__ still in place). */
export function loadInstallTemplate(kind: InstallScriptKind): string {
  let template = templates.get(kind);
  if (template === undefined) {
    template = readFileSync(INSTALL_DIR + (kind === 'sh' ? 'install.sh' : 'install.ps1'), 'utf8');
    templates.set(kind, template);
  }
  return template;
}

/**
 * The install script with this server's URL as the `--server` default and the agent file list
 * embedded. The URL lands inside single quotes in shell and PowerShell, so it is normalised and
 * restricted to characters that cannot end the quoted string.
 */
export function renderInstallScript(kind: InstallScriptKind, serverUrl: string): string {
  let url: URL;
  try {
    url = new URL(serverUrl);
  } catch {
    throw new Error(`renderInstallScript: invalid server URL "${serverUrl}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`renderInstallScript: server URL must be http(s), got ${url.protocol}`);
  }
  // A loop, not /\/+$/: that pattern is quadratic on a long run of slashes (a Host-derived URL is input).
  const normalised = trimTrailingSlashes(`${url.origin}${url.pathname}`);
  if (!/^[A-Za-z0-9:/._~%@+\-[\]]+$/.test(normalised)) {
    throw new Error('renderInstallScript: server URL contains characters not allowed in the install script');
  }
  const files = listAgentFiles().join(' ');
  return loadInstallTemplate(kind)
    .replaceAll('__SVC_SERVER_URL__', normalised)
    .replaceAll('__SVC_AGENT_FILES__', files);
}

function trimTrailingSlashes(value: string): string {
  let end = value.length;
  while (end > 0 && value.charCodeAt(end - 1) === 47 /* / */) end--;
  return value.slice(0, end);
}
