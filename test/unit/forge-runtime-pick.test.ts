// The repository-declared runtime pick (domain/forge/runtime-pick.ts; issue 15 item 5): .nvmrc, then
// .tool-versions, then package.json engines.node; the highest installed version inside the
// declaration; otherwise the service's runtime with a note saying what was declared and what exists.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { declaredNode, pickNodeRuntime, satisfies } from '../../domain/forge/runtime-pick.ts';

const none = { nvmrc: null, toolVersions: null, packageJson: null };
const installed = ['18.19.0', '20.11.1', '20.9.0', '22.3.0', 'not-a-version'];

test('declaration order: .nvmrc, then .tool-versions, then engines.node; aliases are not versions', () => {
  const pkg = JSON.stringify({ engines: { node: '>=18' } });
  assert.deepEqual(declaredNode({ nvmrc: 'v20\n', toolVersions: 'nodejs 22.3.0\n', packageJson: pkg }), {
    range: '20',
    source: '.nvmrc',
  });
  assert.deepEqual(
    declaredNode({ nvmrc: 'lts/*\n', toolVersions: 'python 3.12\nnodejs 22.3.0\n', packageJson: pkg }),
    {
      range: '22.3.0',
      source: '.tool-versions',
    },
  );
  assert.deepEqual(declaredNode({ ...none, packageJson: pkg }), {
    range: '>=18',
    source: 'package.json engines.node',
  });
  assert.equal(declaredNode({ ...none, packageJson: '{not json' }), null);
  assert.equal(declaredNode(none), null);
});

test('ranges: prefix, >=, <, ^, ~, x, ||', () => {
  assert.equal(satisfies('20.11.1', '20'), true);
  assert.equal(satisfies('21.0.0', '20'), false);
  assert.equal(satisfies('20.11.1', '20.11'), true);
  assert.equal(satisfies('20.12.0', '20.11'), false);
  assert.equal(satisfies('22.3.0', '>=18 <21'), false);
  assert.equal(satisfies('20.9.0', '>=18 <21'), true);
  assert.equal(satisfies('20.9.0', '^20.1'), true);
  assert.equal(satisfies('21.0.0', '^20.1'), false);
  assert.equal(satisfies('20.11.5', '~20.11'), true);
  assert.equal(satisfies('20.12.0', '~20.11.0'), false);
  assert.equal(satisfies('18.19.0', '16 || 18'), true);
  assert.equal(satisfies('20.1.0', '20.x'), true);
  assert.equal(satisfies('20.1.0', '>20'), false);
  assert.equal(satisfies('21.0.0', '>20'), true);
  assert.equal(satisfies('20.1.0', 'latest'), null, 'not understood');
});

test('the highest installed version inside the declaration wins', () => {
  const p = pickNodeRuntime({ ...none, nvmrc: '20' }, installed, '20.0.0');
  assert.deepEqual(p, {
    kind: 'declared',
    version: '20.11.1',
    source: '.nvmrc',
    note: 'Node 20.11.1 (declared 20 in .nvmrc)',
  });
  const e = pickNodeRuntime(
    { ...none, packageJson: JSON.stringify({ engines: { node: '>=18' } }) },
    installed,
    '20.0.0',
  );
  assert.equal(e.kind === 'declared' && e.version, '22.3.0');
});

test('declared but not installed: the service runtime with a note; nothing declared: no declaration', () => {
  const p = pickNodeRuntime({ ...none, nvmrc: '16.20.0' }, installed, '20.0.0');
  assert.equal(p.kind, 'service');
  assert.equal(p.kind === 'service' && p.declared, '16.20.0');
  assert.match(
    p.note,
    /\.nvmrc declares Node 16\.20\.0, not installed .*18\.19\.0, 20\.11\.1.*using the service's Node 20\.0\.0/,
  );
  const q = pickNodeRuntime(
    { ...none, packageJson: JSON.stringify({ engines: { node: 'latest' } }) },
    installed,
    '20.0.0',
  );
  assert.match(q.note, /a range this service does not understand/);
  const r = pickNodeRuntime(none, installed, '20.0.0');
  assert.deepEqual(r.kind === 'service' && r.declared, null);
  assert.equal(pickNodeRuntime({ ...none, nvmrc: '20' }, [], '20.0.0').kind, 'service');
});
