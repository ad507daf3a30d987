// The GitHub fake speaks GitHub's documented API: every operation its header lists (method, path,
// operationId) is checked against Octokit's generated route table (which is built from GitHub's
// published OpenAPI description), so a misspelt path or method in the fake fails here; the response
// bodies are typed with @octokit/openapi-types schemas (test/fixtures/github-fake/shapes.ts), so a
// wrong field fails typecheck. And each listed operation is answered by the fake (not a route miss).
// store-independent: the GitHub fake's routes and shapes against Octokit's table
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Octokit } from '@octokit/rest';
import { startGitHubFake } from '../../fixtures/github-fake/server.ts';

const header = readFileSync(new URL('../../fixtures/github-fake/server.ts', import.meta.url), 'utf8');
const camel = (s: string) => s.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

function coveredOperations() {
  const ops: Array<{ method: string; path: string; id: string }> = [];
  for (const line of header.split('\n')) {
    if (!line.startsWith('//')) break;
    const words = line.slice(2).trim().split(/\s+/);
    if (words.length === 3 && /^(GET|POST|PUT|PATCH|DELETE)$/.test(words[0]!) && words[2]!.includes('/'))
      ops.push({ method: words[0]!, path: words[1]!.split('?')[0]!, id: words[2]! });
  }
  return ops;
}

test('every operation the fake lists is a GitHub REST operation with that method and path', () => {
  const ops = coveredOperations();
  assert.ok(ops.length >= 16, `found ${ops.length} operations in the header`);
  const octokit = new Octokit();
  const rest = octokit.rest as unknown as Record<
    string,
    Record<string, { endpoint: { DEFAULTS: { method: string; url: string } } }>
  >;
  for (const op of ops) {
    const [ns, name] = op.id.split('/') as [string, string];
    const fn = rest[ns]?.[camel(name)];
    assert.ok(fn, `${op.id} is an Octokit (OpenAPI) operation`);
    assert.equal(fn.endpoint.DEFAULTS.method, op.method, op.id);
    assert.equal(fn.endpoint.DEFAULTS.url, op.path, op.id);
  }
});

test('the fake answers each listed operation (with a resource that exists)', async () => {
  const fake = await startGitHubFake();
  try {
    fake.createRepo('acme', 'w', { 'a.txt': 'a\n' });
    const sha = fake.commitTo('acme/w', 'feature', { 'b.txt': 'b\n' });
    fake.ciRule(() => [{ name: 'ci', conclusion: 'failure', log: 'boom\n' }]);
    fake.commitTo('acme/w', 'feature', { 'c.txt': 'c\n' });
    const head = fake.branchSha('acme/w', 'feature')!;
    const issue = fake.createIssue('acme/w', 'An issue');
    const silent = { debug() {}, info() {}, warn() {}, error() {} };
    const octokit = new Octokit({ auth: fake.token, baseUrl: fake.apiUrl, log: silent });
    const o = { owner: 'acme', repo: 'w' };
    assert.equal((await octokit.rest.repos.get(o)).data.default_branch, 'main');
    const pr = await octokit.rest.pulls.create({ ...o, head: 'feature', base: 'main', title: 't' });
    assert.equal((await octokit.rest.pulls.list({ ...o, head: 'acme:feature' })).data.length, 1);
    assert.equal((await octokit.rest.pulls.get({ ...o, pull_number: pr.data.number })).data.head.sha, head);
    await octokit.rest.pulls.update({ ...o, pull_number: pr.data.number, body: 'b' });
    const cmp = await octokit.rest.repos.compareCommitsWithBasehead({ ...o, basehead: `main...${sha}` });
    assert.equal(cmp.data.ahead_by, 1);
    const runs = await octokit.rest.checks.listForRef({ ...o, ref: head });
    assert.equal(runs.data.check_runs[0]!.conclusion, 'failure');
    assert.equal((await octokit.rest.repos.getCombinedStatusForRef({ ...o, ref: head })).data.total_count, 0);
    const log = await octokit.rest.actions.downloadJobLogsForWorkflowRun({
      ...o,
      job_id: runs.data.check_runs[0]!.id,
    });
    assert.equal(String(log.data), 'boom\n');
    await octokit.rest.checks.rerequestRun({ ...o, check_run_id: runs.data.check_runs[0]!.id });
    await assert.rejects(
      octokit.rest.pulls.merge({ ...o, pull_number: pr.data.number, sha: 'f'.repeat(40) }),
      /Head branch was modified/,
    );
    assert.ok((await octokit.rest.pulls.merge({ ...o, pull_number: pr.data.number })).data.merged);
    await octokit.rest.git.deleteRef({ ...o, ref: 'heads/feature' });
    assert.equal((await octokit.rest.issues.get({ ...o, issue_number: issue })).data.title, 'An issue');
    await octokit.rest.issues.createComment({ ...o, issue_number: issue, body: 'c' });
    assert.equal((await octokit.rest.issues.listComments({ ...o, issue_number: issue })).data.length, 1);
    await octokit.rest.issues.update({ ...o, issue_number: issue, state: 'closed' });
    assert.deepEqual(fake.unrouted, []);
    // unauthenticated calls are refused
    await assert.rejects(
      new Octokit({ baseUrl: fake.apiUrl, log: silent }).rest.repos.get(o),
      /Bad credentials/,
    );
  } finally {
    await fake.close();
  }
});
