// The production deployment example (examples/deploy/) and the "Production deployment" section of
// docs/operators/production.md name only things that exist: every setting is one of config/settings.ts, every `npm run`
// script is in package.json, every file the section points to is there; and the example environment
// loads as settings, its Temporal options building a TLS + mTLS connection once the files exist.
// (The metric names are checked against a live /metrics in test/integration/deploy-metrics.test.ts.)
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadSettings, SECTION_NAMES, SETTING_NAMES, sectionEnvName } from '../../config/settings.ts';
import { temporalConnection } from '../../config/temporal-connection.ts';
import { createTestPki } from '../fixtures/tls-certs.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DEPLOY = path.join(ROOT, 'examples', 'deploy');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/** `NAME=value` lines of an env file, commented-out examples included (`#NAME=value`). */
function envAssignments(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const raw of text.split('\n')) {
    const line = raw.startsWith('#') ? raw.slice(1) : raw;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const name = line.slice(0, eq);
    if (/^[A-Z][A-Z0-9_]*$/.test(name)) out.push([name, line.slice(eq + 1)]);
  }
  return out;
}

const defaults = loadSettings({ SVC_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'svc-deploy-')) });
const sectionEnvNames = new Set(
  SECTION_NAMES.flatMap((s) => Object.keys(defaults[s] as object).map((key) => sectionEnvName(s, key))),
);
const isSetting = (name: string) => (SETTING_NAMES as string[]).includes(name) || sectionEnvNames.has(name);

const PAGE = 'docs/operators/production.md';
const page = readFileSync(path.join(ROOT, PAGE), 'utf8');
const start = page.indexOf('\n## Production deployment\n');
const end = page.indexOf('\n## ', start + 5);
const section = end === -1 ? page.slice(start) : page.slice(start, end);

test('the docs have the Production deployment section and the example files it names', () => {
  assert.ok(start > 0, 'docs/operators/production.md "Production deployment" is missing');
  for (const f of [
    'svc.env',
    'api-1.env',
    'systemd/svc-migrate.service',
    'systemd/svc-api@.service',
    'systemd/svc-worker@.service',
    'nginx/svc.conf',
    'prometheus/svc-alerts.yml',
    'temporal/temporal-server.yaml',
    'temporal/dynamicconfig.yaml',
    'temporal/setup-schema.sh',
    'systemd/temporal-server.service',
  ]) {
    assert.ok(existsSync(path.join(DEPLOY, f)), `examples/deploy/${f} is missing`);
    assert.ok(section.includes(path.basename(f)), `${PAGE} does not mention ${f}`);
  }
});

test('every setting the example files assign exists in config/settings.ts', () => {
  let count = 0;
  for (const file of filesUnder(DEPLOY)) {
    const text = readFileSync(file, 'utf8');
    const names = file.endsWith('.env')
      ? envAssignments(text).map(([n]) => n)
      : [...text.matchAll(/^Environment=([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
    for (const name of names) {
      count++;
      assert.ok(isSetting(name), `${path.relative(ROOT, file)} sets ${name}, which is not a setting`);
    }
  }
  assert.ok(count >= 20, `only ${count} settings found: the parser no longer reads the examples`);
});

test('every setting-like name the Production deployment section mentions exists', () => {
  const names = new Set(
    [...section.matchAll(/`((?:SVC|TEMPORAL|DATABASE|NODE|SECRET|LOG)_[A-Z0-9_]+)/g)].map((m) => m[1]!),
  );
  assert.ok(names.size >= 15, [...names].join(','));
  for (const name of names)
    assert.ok(isSetting(name), `${PAGE} "Production deployment" names ${name}, not a setting`);
});

test('every `npm run` script in the examples and the section is a package.json script', () => {
  const scripts = Object.keys(
    (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
      .scripts,
  );
  const texts = [section, ...filesUnder(DEPLOY).map((f) => readFileSync(f, 'utf8'))];
  const used = new Set(
    texts.flatMap((t) => [...t.matchAll(/npm run ([a-z][a-z0-9-]*(?::[a-z0-9-]+)*)/g)].map((m) => m[1]!)),
  );
  for (const s of ['api', 'worker', 'migrate', 'agent-account:install'])
    assert.ok(used.has(s), `${s} not named`);
  for (const s of used) assert.ok(scripts.includes(s), `npm run ${s} is not a script`);
  // The units run the commands the docs document.
  const unit = (f: string) => readFileSync(path.join(DEPLOY, 'systemd', f), 'utf8');
  assert.match(unit('svc-migrate.service'), /^ExecStart=\/usr\/bin\/npm run migrate -- upgrade head$/m);
  assert.match(unit('svc-api@.service'), /^ExecStart=\/usr\/bin\/npm run api$/m);
  assert.match(unit('svc-api@.service'), /^EnvironmentFile=\/etc\/svc\/api-%i\.env$/m);
  assert.match(unit('svc-worker@.service'), /^ExecStart=\/usr\/bin\/npm run worker$/m);
  assert.doesNotMatch(unit('svc-worker@.service'), /^PrivateTmp=/m);
});

test('the example environment loads as settings and builds the TLS + mTLS Temporal connection', () => {
  const env: Record<string, string> = {};
  for (const f of ['svc.env', 'api-1.env'])
    for (const [name, value] of envAssignments(readFileSync(path.join(DEPLOY, f), 'utf8')))
      if (!readFileSync(path.join(DEPLOY, f), 'utf8').includes(`#${name}=`)) env[name] = value;
  const pki = createTestPki('temporal.internal');
  const settings = loadSettings({
    ...env,
    SVC_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'svc-deploy-')),
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCertPath,
    TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCertPath,
    TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKeyPath,
  });
  assert.equal(settings.production, true);
  assert.equal(settings.dialect, 'postgres');
  assert.equal(settings.SVC_INSTANCE_URL, 'https://api-1.svc.example.com');
  assert.deepEqual(settings.SVC_WEB_CONNECT_ORIGINS, [
    'https://api-1.svc.example.com',
    'https://api-2.svc.example.com',
  ]);
  assert.ok(settings.SVC_ALLOWED_HOSTS.includes(new URL(settings.SVC_INSTANCE_URL!).host));
  const c = temporalConnection(settings, settings.TEMPORAL_ADDRESS!);
  assert.match(
    c.summary,
    /^temporal\.internal:7233 \(TLS, server CA .*, server name temporal\.internal, mTLS/,
  );
});
