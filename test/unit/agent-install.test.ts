// The installer path: api/remote-agent-files.ts serves the transpiled agent, install.sh downloads it,
// writes config.json, registers with plain `node main.js` (no tsx) and skips the service.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CLI_PACKAGES, cliPackageSpec } from '../../agent/cli-packages.ts';
import {
  listAgentFiles,
  loadAgentFile,
  loadInstallTemplate,
  renderInstallScript,
  rewriteTsSpecifiers,
} from '../../api/remote-agent-files.ts';
import { DEFAULT_CLI_TOOL } from '../../domain/remote-cli-tools.ts';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((ok) => {
    // A clean environment: the installer must not depend on tsx or anything from this repo.
    const child = spawn(cmd, args, { env: { PATH: process.env.PATH, HOME: env.HOME ?? tmpdir(), ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('exit', (code) => ok({ code, out, err }));
  });
}

/** A directory holding an `npm` that runs `body` (sh), to put first on PATH. */
function fakeNpm(home: string, body: string): string {
  const dir = mkdtempSync(join(home, 'fake-npm-'));
  writeFileSync(join(dir, 'npm'), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, 'npm'), 0o755);
  return dir;
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((ok) => server.close(ok));
  return port;
}

/** Serves install.sh, the agent files, their index and the register endpoint, as the real server will. */
async function installServer(opts: { tamper?: string } = {}): Promise<{
  url: string;
  token: string;
  registrations: any[];
  close: () => Promise<void>;
}> {
  const token = `reg-${randomUUID()}`;
  const registrations: any[] = [];
  let used = false;
  const server = http.createServer(async (req, res) => {
    const path = req.url ?? '';
    if (path === '/api/remote/agent/install.sh') {
      res.writeHead(200, { 'content-type': 'text/x-shellscript' });
      return res.end(renderInstallScript('sh', `http://127.0.0.1:${port}`));
    }
    if (path === '/api/remote/agent/files/') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ files: listAgentFiles() }));
    }
    if (path.startsWith('/api/remote/agent/files/')) {
      const file = await loadAgentFile(decodeURIComponent(path.slice('/api/remote/agent/files/'.length)));
      if (!file) {
        res.writeHead(404);
        return res.end();
      }
      res.writeHead(200, { 'content-type': file.contentType });
      // A man in the middle (or a broken cache) altering one file after the manifest was made.
      const rel = path.slice('/api/remote/agent/files/'.length);
      return res.end(rel === opts.tamper ? `${file.body}\n// injected\n` : file.body);
    }
    if (path === '/api/remote/agent/register' && req.method === 'POST') {
      let raw = '';
      for await (const c of req) raw += c;
      const body = JSON.parse(raw);
      const ok = body.registration_token === token && !used;
      used = true; // consumed either way, as the spec says
      if (!ok) {
        res.writeHead(401, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: 'registration token is invalid or already used' }));
      }
      registrations.push(body);
      res.writeHead(201, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ machine_id: body.machine_id, agent_token: 'agent-tok' }));
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    registrations,
    close: () =>
      new Promise((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
}

describe('agent files served to installers', () => {
  it('lists every agent module as .js plus package.json and the docs, and nothing else', () => {
    const files = listAgentFiles();
    for (const f of [
      'main.js',
      'config.js',
      'transport.js',
      'poller.js',
      'sessions.js',
      'adapters.js',
      'backoff.js',
      'log.js',
    ]) {
      assert.ok(files.includes(f), f);
    }
    assert.ok(files.includes('package.json') && files.includes('README.md') && files.includes('PROTOCOL.md'));
    assert.ok(
      files.every((f) => !f.endsWith('.ts') && !f.includes('/')),
      files.join(' '),
    );
  });

  it('transpiles with .js import specifiers and caches the result', async () => {
    const main = await loadAgentFile('main.js');
    assert.ok(main);
    assert.match(main.contentType, /javascript/);
    assert.match(main.body, /from\s*["']\.\/agent\.js["']/);
    assert.doesNotMatch(main.body, /["']\.\.?\/[^"']+\.ts["']/);
    assert.doesNotMatch(main.body, /: AgentConfig|interface /, 'types are gone');
    assert.equal(await loadAgentFile('main.js'), main, 'same cached object');
    const pkg = await loadAgentFile('package.json');
    assert.equal(JSON.parse(pkg!.body).type, 'module');
    assert.match((await loadAgentFile('PROTOCOL.md'))!.body, /Polling/);
  });

  it('serves manifest.json: every listed file with the SHA-256 of the bytes served', async () => {
    const manifest = JSON.parse((await loadAgentFile('manifest.json'))!.body);
    assert.deepEqual(
      manifest.files.map((f: any) => f.path),
      listAgentFiles(),
    );
    for (const { path, sha256 } of manifest.files) {
      const body = (await loadAgentFile(path))!.body;
      assert.equal(sha256, createHash('sha256').update(body, 'utf8').digest('hex'), path);
    }
    assert.ok(!listAgentFiles().includes('manifest.json'), 'not installed itself');
  });

  it('renders a script in linear time for a URL with a long run of slashes', () => {
    // 40,000 slashes: linear work takes about a millisecond; a quadratic pattern would take 1.6e9 steps
    // (seconds). The bound is wide so that a loaded CI machine cannot fail it, and still catches that.
    const start = process.hrtime.bigint();
    renderInstallScript('sh', `http://h/${'/'.repeat(40_000)}x`);
    renderInstallScript('sh', `http://h/a${'/'.repeat(40_000)}`);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    assert.ok(ms < 1000, `took ${ms} ms`);
  });

  it('returns null for anything not in the list (no path traversal)', async () => {
    for (const bad of [
      '../package.json',
      'main.ts',
      '/etc/passwd',
      '../../etc/passwd',
      'install/install.sh',
      'config.json',
      './main.js',
      'main.js/',
      '',
      '..',
    ]) {
      assert.equal(await loadAgentFile(bad), null, bad);
    }
  });

  it('rewrites only relative .ts specifiers', () => {
    assert.equal(rewriteTsSpecifiers(`import { a } from "./a.ts";`), `import { a } from "./a.js";`);
    assert.equal(rewriteTsSpecifiers(`export * from '../b/c.ts'`), `export * from '../b/c.js'`);
    assert.equal(rewriteTsSpecifiers(`await import("./d.ts")`), `await import("./d.js")`);
    assert.equal(rewriteTsSpecifiers(`import "./side.ts";`), `import "./side.js";`);
    assert.equal(rewriteTsSpecifiers(`import x from "pkg.ts"`), `import x from "pkg.ts"`);
    assert.equal(rewriteTsSpecifiers(`const s = "./not-an-import.ts"`), `const s = "./not-an-import.ts"`);
  });

  it('renders install scripts with the server URL and the file list, refusing unsafe URLs', () => {
    for (const kind of ['sh', 'ps1'] as const) {
      assert.match(loadInstallTemplate(kind), /__SVC_SERVER_URL__/);
      const script = renderInstallScript(kind, 'https://svc.example.com:8443/');
      assert.match(script, /'https:\/\/svc\.example\.com:8443'/);
      assert.match(script, new RegExp(`'${listAgentFiles().join(' ').replaceAll('.', '\\.')}'`));
      assert.doesNotMatch(script, /__SVC_SERVER_URL__|__SVC_AGENT_FILES__/);
    }
    assert.throws(() => renderInstallScript('sh', "http://x/'; rm -rf ~; '"), /not allowed/);
    assert.throws(() => renderInstallScript('sh', 'file:///etc'), /http/);
  });

  it('the transpiled agent runs on plain node without tsx', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-standalone-'));
    for (const f of listAgentFiles()) writeFileSync(join(dir, f), (await loadAgentFile(f))!.body);
    const version = await run(process.execPath, [join(dir, 'main.js'), 'version']);
    assert.equal(version.code, 0, version.err);
    assert.match(version.out, /^\d+\.\d+\.\d+\n$/);
    const help = await run(process.execPath, [join(dir, 'main.js'), '--bogus']);
    assert.equal(help.code, 2);
    assert.match(help.err, /unknown option --bogus/);
  });
});

describe('install.sh', () => {
  it('installs, writes a 0600 config with machine_id, registers and skips the service', async (t) => {
    const srv = await installServer();
    t.after(srv.close);
    const home = mkdtempSync(join(tmpdir(), 'agent-home-'));
    const script = join(home, 'install.sh');
    writeFileSync(script, renderInstallScript('sh', srv.url));
    const dir = join(home, 'agent dir with space');
    const res = await run(
      'sh',
      [
        script,
        '--token',
        srv.token,
        '--name',
        'laptop',
        '--dir',
        dir,
        '--no-service',
        '--skip-cli-install',
        '--insecure',
      ],
      { HOME: home },
    );
    assert.equal(res.code, 0, res.out + res.err);
    assert.match(res.out, /==> Checking Node\.js/);
    assert.match(res.out, /==> Downloading main\.js/);
    assert.match(res.out, /Skipping service installation/);
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    assert.equal(statSync(join(dir, 'config.json')).mode & 0o777, 0o600);
    assert.equal(config.agent_token, 'agent-tok');
    assert.equal(config.registration_token, undefined);
    assert.equal(config.machine_name, 'laptop');
    assert.equal(config.server_url, srv.url);
    assert.equal(config.cli_tool, 'cli_alpha');
    assert.match(config.machine_id, /^[0-9a-f-]{36}$/);
    assert.equal(srv.registrations[0].machine_id, config.machine_id);
    assert.equal(srv.registrations[0].machine_name, 'laptop');
    for (const f of listAgentFiles()) assert.ok(existsSync(join(dir, f)), f);
    assert.ok(!res.out.includes(srv.token) && !res.err.includes(srv.token), 'token not echoed');
  });

  it('works from the unrendered template with --server, using the file index', async (t) => {
    const srv = await installServer();
    t.after(srv.close);
    const home = mkdtempSync(join(tmpdir(), 'agent-home-'));
    const res = await run(
      'sh',
      [
        join(REPO, 'agent/install/install.sh'),
        '--server',
        `${srv.url}/`,
        '--token',
        srv.token,
        '--dir',
        join(home, 'a'),
        '--no-service',
        '--skip-cli-install',
        '--insecure',
      ],
      { HOME: home },
    );
    assert.equal(res.code, 0, res.out + res.err);
    assert.match(res.out, /Fetching the agent manifest/);
    assert.equal(JSON.parse(readFileSync(join(home, 'a', 'config.json'), 'utf8')).agent_token, 'agent-tok');
  });

  it('fails clearly when registration fails: the token is consumed, a new one is needed', async (t) => {
    const srv = await installServer();
    t.after(srv.close);
    const home = mkdtempSync(join(tmpdir(), 'agent-home-'));
    const script = join(home, 'install.sh');
    writeFileSync(script, renderInstallScript('sh', srv.url));
    const res = await run(
      'sh',
      [
        script,
        '--token',
        'not-the-token',
        '--dir',
        join(home, 'a'),
        '--no-service',
        '--skip-cli-install',
        '--insecure',
      ],
      { HOME: home },
    );
    assert.notEqual(res.code, 0);
    assert.match(res.err, /registration failed/);
    assert.match(res.err, /consumed by the server/);
    assert.match(res.err, /new token/);
  });

  it('refuses an http:// server without --insecure, before downloading anything', async (t) => {
    const srv = await installServer();
    t.after(srv.close);
    const home = mkdtempSync(join(tmpdir(), 'agent-home-'));
    const script = join(home, 'install.sh');
    writeFileSync(script, renderInstallScript('sh', srv.url));
    const res = await run('sh', [script, '--token', srv.token, '--dir', join(home, 'a'), '--no-service'], {
      HOME: home,
    });
    assert.equal(res.code, 1);
    assert.match(res.err, /refusing the http:\/\/ server URL .*pass --insecure/);
    assert.ok(!existsSync(join(home, 'a', 'main.js')));
    assert.equal(srv.registrations.length, 0);
  });

  it('refuses a file whose SHA-256 does not match the manifest, and does not register', async (t) => {
    const srv = await installServer({ tamper: 'sessions.js' });
    t.after(srv.close);
    const home = mkdtempSync(join(tmpdir(), 'agent-home-'));
    const script = join(home, 'install.sh');
    writeFileSync(script, renderInstallScript('sh', srv.url));
    const dir = join(home, 'a');
    const res = await run(
      'sh',
      [script, '--token', srv.token, '--dir', dir, '--no-service', '--skip-cli-install', '--insecure'],
      { HOME: home },
    );
    assert.equal(res.code, 1, res.out + res.err);
    assert.match(res.err, /checksum mismatch for sessions\.js/);
    assert.ok(
      !existsSync(join(dir, 'sessions.js')) && !existsSync(join(dir, 'main.js')),
      'nothing installed',
    );
    assert.equal(srv.registrations.length, 0, 'no registration');
  });

  it('pins every CLI of agent/cli-packages.ts identically in install.sh and install.ps1', () => {
    const sh = loadInstallTemplate('sh');
    const ps1 = loadInstallTemplate('ps1');
    for (const [id, pkg] of Object.entries(CLI_PACKAGES)) {
      const spec = cliPackageSpec(pkg);
      assert.ok(
        sh.includes(`  ${id}) CLI_PACKAGE='${spec}'; CLI_EXE='${pkg.bin}' ;;`),
        `install.sh: ${id} ${spec}`,
      );
      assert.ok(ps1.includes(`  ${id} = @('${spec}', '${pkg.bin}')`), `install.ps1: ${id} ${spec}`);
    }
    // ... and nothing else: each script's table has exactly the tool ids of the TypeScript table.
    const ids = Object.keys(CLI_PACKAGES).sort();
    assert.deepEqual([...sh.matchAll(/^ {2}(cli_\w+)\) CLI_PACKAGE=/gm)].map((m) => m[1]).sort(), ids);
    assert.deepEqual([...ps1.matchAll(/^ {2}(cli_\w+) = @\('/gm)].map((m) => m[1]).sort(), ids);
    for (const script of [sh, ps1]) {
      assert.match(script, /manifest\.json/);
      assert.match(script, /--insecure/);
    }
    // The default --install-cli is the default tool.
    assert.match(sh, /^CLI_TOOL='cli_alpha'$/m);
    assert.match(ps1, /^\$CliTool = 'cli_alpha'$/m);
    assert.equal(DEFAULT_CLI_TOOL, 'cli_alpha');
  });

  it('--install-cli installs the pinned package with npm and points cli_path at it', async (t) => {
    const srv = await installServer();
    t.after(srv.close);
    const home = mkdtempSync(join(tmpdir(), 'agent-home-'));
    // A stand-in npm (no registry here): records its arguments and creates the executable.
    const bin = fakeNpm(
      home,
      'echo "$@" > "$HOME/npm-args"; prefix=$6; mkdir -p "$prefix/node_modules/.bin"; printf "#!/bin/sh\\n" > "$prefix/node_modules/.bin/qwen"; chmod 755 "$prefix/node_modules/.bin/qwen"',
    );
    const dir = join(home, 'a');
    const script = join(home, 'install.sh');
    writeFileSync(script, renderInstallScript('sh', srv.url));
    const res = await run('sh', [script, '--token', srv.token, '--dir', dir, '--no-service', '--insecure'], {
      HOME: home,
      PATH: `${bin}:${process.env.PATH}`,
    });
    assert.equal(res.code, 0, res.out + res.err);
    const args = readFileSync(join(home, 'npm-args'), 'utf8').trim().split(' ');
    assert.equal(args[0], 'install');
    assert.equal(args.at(-1), cliPackageSpec(CLI_PACKAGES.cli_alpha!), 'the pinned default CLI');
    assert.equal(args[args.indexOf('--prefix') + 1], join(dir, 'cli'));
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    assert.equal(config.cli_tool, 'cli_alpha');
    assert.equal(config.cli_path, join(dir, 'cli', 'node_modules', '.bin', 'qwen'));
    assert.equal(config.agent_token, 'agent-tok');
  });

  it('fails, before registering, when npm cannot install the CLI (registry unreachable)', async (t) => {
    const srv = await installServer();
    t.after(srv.close);
    const home = mkdtempSync(join(tmpdir(), 'agent-home-'));
    const script = join(home, 'install.sh');
    writeFileSync(script, renderInstallScript('sh', srv.url));
    // The real npm, pointed at a registry on a closed local port, without retries.
    const registry = `http://127.0.0.1:${await closedPort()}/`;
    const res = await run(
      'sh',
      [
        script,
        '--token',
        srv.token,
        '--dir',
        join(home, 'a'),
        '--no-service',
        '--install-cli',
        'cli_delta',
        '--insecure',
      ],
      {
        HOME: home,
        npm_config_registry: registry,
        npm_config_fetch_retries: '0',
        npm_config_cache: join(home, 'npm-cache'),
        npm_config_offline: 'false',
      },
    );
    assert.equal(res.code, 1, res.out + res.err);
    const spec = cliPackageSpec(CLI_PACKAGES.cli_delta!);
    assert.match(res.err, new RegExp(`error: npm could not install ${spec.replace(/[.@/]/g, '\\$&')}`));
    assert.match(res.err, /reaches the npm registry/);
    assert.ok(res.err.includes(registry), 'names the registry it tried');
    assert.match(res.err, /--skip-cli-install/);
    assert.match(res.err, /registration token has not been used/);
    assert.equal(srv.registrations.length, 0, 'nothing registered: the token stays valid');
    assert.ok(!existsSync(join(home, 'a', 'config.json')), 'no config written');
  });

  it('fails when npm is missing or the tool is unknown; --skip-cli-install still works', async (t) => {
    const srv = await installServer();
    t.after(srv.close);
    const home = mkdtempSync(join(tmpdir(), 'agent-home-'));
    const script = join(home, 'install.sh');
    writeFileSync(script, renderInstallScript('sh', srv.url));
    // A PATH with node and every program of this PATH but npm.
    const noNpmDir = join(home, 'no-npm');
    mkdirSync(noNpmDir);
    for (const dirOnPath of [dirname(process.execPath), ...(process.env.PATH ?? '').split(':')]) {
      let names: string[] = [];
      try {
        names = readdirSync(dirOnPath);
      } catch {}
      for (const name of names) {
        if (name === 'npm' || name === 'npx' || existsSync(join(noNpmDir, name))) continue;
        symlinkSync(join(dirOnPath, name), join(noNpmDir, name));
      }
    }
    const pathWithoutNpm = noNpmDir;
    const base = [script, '--token', srv.token, '--dir', join(home, 'a'), '--no-service', '--insecure'];
    const noNpm = await run('sh', base, { HOME: home, PATH: pathWithoutNpm });
    assert.equal(noNpm.code, 1, noNpm.out + noNpm.err);
    assert.match(
      noNpm.err,
      /npm is not installed or not on PATH, so @qwen-code\/qwen-code@0\.24\.4 cannot be installed/,
    );
    const unknown = await run('sh', [...base, '--install-cli', 'cli_omega'], { HOME: home });
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.err,
      /unknown CLI tool 'cli_omega' for --install-cli \(known: cli_alpha, cli_beta, cli_gamma, cli_delta\)/,
    );
    assert.equal(srv.registrations.length, 0);
    const skipped = await run('sh', [...base, '--install-cli', 'cli_omega', '--skip-cli-install'], {
      HOME: home,
      PATH: pathWithoutNpm,
    });
    assert.equal(skipped.code, 0, skipped.out + skipped.err);
    assert.match(skipped.out, /Skipping CLI installation/);
    const config = JSON.parse(readFileSync(join(home, 'a', 'config.json'), 'utf8'));
    assert.equal(config.cli_tool, 'cli_omega');
    assert.equal(config.cli_path, undefined);
  });

  it('rejects missing required parameters', async () => {
    const home = mkdtempSync(join(tmpdir(), 'agent-home-'));
    const noToken = await run(
      'sh',
      [join(REPO, 'agent/install/install.sh'), '--server', 'http://127.0.0.1:9'],
      { HOME: home },
    );
    assert.equal(noToken.code, 1);
    assert.match(noToken.err, /--token TOKEN is required/);
    const noServer = await run('sh', [join(REPO, 'agent/install/install.sh'), '--token', 'x'], {
      HOME: home,
    });
    assert.match(noServer.err, /--server URL is required/);
  });
});
