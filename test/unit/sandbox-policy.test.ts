// The sandbox's pure parts (agent/sandbox-policy.ts, sandbox-gate.ts allowedTarget): what is bound
// how and in which order, and which request targets the model-proxy gate lets through.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allowedTarget } from '../../agent/sandbox-gate.ts';
import { bwrapArgs, insideIds, SANDBOX_RUN_DIR } from '../../agent/sandbox-policy.ts';

const host = {
  exists: () => true,
  isSymlink: (p: string) => ['/bin', '/sbin', '/lib', '/lib64'].includes(p),
};
const args = (extra: Partial<Parameters<typeof bwrapArgs>[0]> = {}) =>
  bwrapArgs(
    { workdir: '/w/tree', home: '/s/home', runDir: '/tmp/run', ids: { uid: 1000, gid: 1000 }, ...extra },
    host,
  );
/** The [flag, source, dest] triples of the binds, in order. */
const binds = (a: string[]) =>
  a.flatMap((x, i) => (['--bind', '--ro-bind', '--tmpfs'].includes(x) ? [[x, a[i + 1]!]] : []));

describe('sandbox policy', () => {
  it('unshares everything, keeps no capability flag, ends with chdir and --', () => {
    const a = args();
    assert.ok(a.includes('--unshare-all'));
    assert.ok(!a.includes('--cap-add') && !a.includes('--share-net'));
    assert.deepEqual(a.slice(-3), ['--chdir', '/w/tree', '--']);
    assert.ok(a.includes('--remount-ro'));
    assert.deepEqual(a.slice(a.indexOf(SANDBOX_RUN_DIR) - 2, a.indexOf(SANDBOX_RUN_DIR) + 1), [
      '--ro-bind',
      '/tmp/run',
      SANDBOX_RUN_DIR,
    ]);
  });

  it('metadata inside the worktree is read-only over the writable worktree; masks before the home', () => {
    const b = binds(args({ readable: ['/w/tree/.git', '/opt/tool'], hide: ['/w/tree/.agent', '/s'] }));
    const at = (flag: string, p: string) => b.findIndex(([f, s]) => f === flag && s === p);
    assert.ok(at('--ro-bind', '/opt/tool') < at('--bind', '/w/tree'));
    assert.ok(at('--bind', '/w/tree') < at('--ro-bind', '/w/tree/.git'));
    assert.ok(at('--tmpfs', '/w/tree/.agent') > at('--bind', '/w/tree'));
    // `/s` holds the home but is not inside anything exposed: no mask, and the home is bound last.
    assert.equal(at('--tmpfs', '/s'), -1);
    assert.ok(at('--bind', '/s/home') > at('--tmpfs', '/w/tree/.agent'));
  });

  it('relative paths are refused; root starts the sandbox as 1000, others as themselves', () => {
    assert.throws(() => args({ workdir: 'tree' }), /absolute/);
    assert.deepEqual(insideIds({ uid: 0, gid: 0 }), { uid: 1000, gid: 1000 });
    assert.deepEqual(insideIds({ uid: 999, gid: 995 }), { uid: 999, gid: 995 });
  });
});

describe('model-proxy gate targets', () => {
  const prefix = '/api/remote/llm-proxy';
  it('lets the proxy prefix through, with paths and queries below it', () => {
    for (const t of [prefix, `${prefix}/v1/messages`, `${prefix}/v1beta/models/m:generate?alt=sse`])
      assert.equal(allowedTarget(t, prefix), true, t);
  });
  it('refuses other routes, look-alike prefixes, dot segments, encoded separators and absolute forms', () => {
    for (const t of [
      '/api/auth/me',
      `${prefix}-other/x`,
      `${prefix}/../../auth/me`,
      `${prefix}/./x`,
      `${prefix}/%2e%2e/auth/me`,
      `${prefix}%2f..%2fauth`,
      `${prefix}/a\\..\\b`,
      `http://127.0.0.1:7233${prefix}`,
      '*',
      '',
      undefined,
    ])
      assert.equal(allowedTarget(t, prefix), false, String(t));
  });
  it('a root prefix allows every origin-form path', () => {
    assert.equal(allowedTarget('/v1/messages', '/'), true);
    assert.equal(allowedTarget('http://x/v1', '/'), false);
  });
});
