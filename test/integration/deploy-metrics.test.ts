// Every metric the deployment guide tells operators to alert on (examples/deploy/prometheus/svc-alerts.yml
// and the "Production deployment" table of docs/operators/production.md) is one a running instance exports on GET /metrics,
// and the two gauges set by /readyz read 1 once a worker polls and the database answers.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { workerPolls } from '../support/readiness.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** `up` is the scraper's own series, not the service's. */
const SCRAPE_SERIES = new Set(['up']);

let app: TestApp;
before(async () => {
  app = await startTestApp({ worker: true });
});
after(async () => {
  await app?.close();
});

/** Sample names of a Prometheus text exposition. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const end = line.search(/[{ ]/);
    names.add(end < 0 ? line : line.slice(0, end));
  }
  return names;
}

async function scrape(): Promise<string> {
  const res = await fetch(`${app.url}/metrics`);
  assert.equal(res.status, 200);
  return res.text();
}

test('every metric named in the alert rules and the docs metrics table is exported', async () => {
  // /readyz sets the svc_* gauges; poll until the worker is seen.
  const deadline = Date.now() + 60_000;
  while (!(await workerPolls(app.url))) {
    assert.ok(Date.now() < deadline, '/readyz never saw the worker');
    await new Promise((r) => setTimeout(r, 250));
  }
  const exported = exportedNames(await scrape());

  const rules = readFileSync(path.join(ROOT, 'examples/deploy/prometheus/svc-alerts.yml'), 'utf8');
  const fromRules = new Set([...rules.matchAll(/\b([a-z_][a-z0-9_]*)\{/g)].map((m) => m[1]!));
  const page = readFileSync(path.join(ROOT, 'docs/operators/production.md'), 'utf8');
  const start = page.indexOf('\n## Production deployment\n');
  const end = page.indexOf('\n## ', start + 5);
  const section = end === -1 ? page.slice(start) : page.slice(start, end);
  const table = section.slice(section.indexOf('| Metric | Alert when |'));
  const fromReadme = new Set(
    [...table.matchAll(/^\| `([a-z_][a-z0-9_]*)`/gm), ...table.matchAll(/\/ `([a-z_][a-z0-9_]*)`/gm)].map(
      (m) => m[1]!,
    ),
  );
  assert.ok(fromRules.size >= 8, [...fromRules].join(','));
  assert.ok(fromReadme.size >= 8, [...fromReadme].join(','));
  for (const name of [...fromRules, ...fromReadme]) {
    if (SCRAPE_SERIES.has(name)) continue;
    assert.ok(exported.has(name), `${name} is named for alerting but /metrics does not export it`);
  }

  const text = await scrape();
  assert.match(text, /^svc_worker_running 1$/m);
  assert.match(text, /^svc_database_up 1$/m);
  assert.match(
    text,
    /^http_request_duration_seconds_count\{method="GET",route="\/readyz",status="200"\} \d+$/m,
  );
});
