// bench/content-filter: what the model proxy's content-filter scan costs per call (issue 31 item 2),
// the one-pass matcher (domain/content-filter/matcher.ts) beside the rule-by-rule loop it replaced
// (checkText, kept as the reference), in one run, for 10, 100 and 1,000 block rules. Pure CPU, in
// process: no server, no database.
//   scan    the check alone, on the user text of a typical request (~3 KB: a question and some code)
//   body    what the proxy does per call: JSON.parse of the ~6 KB body (system prompt, an assistant
//           turn, a tool result and the user turn), the user text taken out, the scan; the old
//           path parsed the body a second time for a streamed call's include_usage rewrite
//   hit     a text that one rule (the last) matches
// Rule sets: "keywords" (all keyword rules) and "mixed" (90 % keywords, 10 % RE2 regexes).
//
//   npm run bench -- content-filter [--rounds 5] [--ms 300]
import { parseArgs } from 'node:util';
import { compileMatcher } from '../../domain/content-filter/matcher.ts';
import { promptTextOf } from '../../domain/content-filter/prompt-text.ts';
import { checkText, compileRules, type FilterRule } from '../../domain/content-filter/rules.ts';
import { addStreamUsageOption } from '../../domain/proxy/stream-usage-option.ts';
import { parseJson } from '../../domain/usage/usage.ts';
import { machine, median } from '../support/stats.ts';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, ms: { type: 'string', default: '300' } },
});
const rounds = Number(values.rounds);
const budgetMs = Number(values.ms);

function rulesOf(n: number, regexShare: number): FilterRule[] {
  const out: FilterRule[] = [];
  const regexes = Math.round(n * regexShare);
  for (let i = 0; i < n; i++) {
    const regex = i >= n - regexes;
    out.push({
      id: i + 1,
      // Keywords look like the words a policy blocks: names, codes, secrets' prefixes.
      pattern: regex
        ? `(?:tok|key)_${i}_[a-f0-9]{16}|AKIA${i}[0-9A-Z]{12}`
        : `project-${i.toString(36)}-internal`,
      type: regex ? 'regex' : 'keyword',
      severity: 'high',
      action: 'block',
      description: null,
      isEnabled: true,
      tenantId: 1,
    });
  }
  return out;
}

const code = `function total(items) {\n  let sum = 0;\n  for (const item of items) sum += item.price * item.quantity;\n  return sum;\n}\n`;
const userText = `Please review this function and tell me why the totals are off by a few cents when the cart has discounts applied. ${code.repeat(20)}Also suggest tests.`;
const body = JSON.stringify({
  model: 'gpt-test',
  stream: true,
  messages: [
    { role: 'system', content: `You are a careful reviewer. ${'Follow the style guide. '.repeat(40)}` },
    { role: 'user', content: 'Look at cart.js' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"cart.js"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: code.repeat(10) },
    { role: 'user', content: userText },
  ],
});
const bodyBuffer = Buffer.from(body);

/** Calls of fn that fit in budgetMs: ns per call. */
function round(fn: () => unknown): number {
  let calls = 0;
  const start = process.hrtime.bigint();
  const until = start + BigInt(budgetMs) * 1_000_000n;
  let now = start;
  while (now < until) {
    for (let i = 0; i < 20; i++) fn();
    calls += 20;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / calls;
}

/** ns per call of the old and the new path: rounds interleaved (old, new, old, ...), medians. */
function measure(old: () => unknown, next: () => unknown): [number, number] {
  for (let i = 0; i < 200; i++) {
    old();
    next();
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < rounds; r++) {
    a.push(round(old));
    b.push(round(next));
  }
  return [median(a), median(b)];
}

const us = (ns: number) => (ns / 1000).toFixed(ns < 10_000 ? 2 : 1);

console.log(
  `content-filter bench: ${machine()}; old and new in interleaved rounds, median of ${rounds} rounds of ${budgetMs} ms each; us per call`,
);
console.log(`user text ${userText.length} chars, body ${bodyBuffer.length} bytes`);
console.log('| rules | set | scan: old / new | body (parse + scan): old / new | hit: old / new |');
console.log('|---|---|---|---|---|');
for (const n of [10, 100, 1000]) {
  for (const [set, share] of [
    ['keywords', 0],
    ['mixed', 0.1],
  ] as const) {
    const rules = compileRules(rulesOf(n, share));
    const matcher = compileMatcher(rules);
    const last = rules.at(-1)!.rule;
    const hitText = `${userText} ${last.type === 'keyword' ? last.pattern : `tok_${n - 1}_0123456789abcdef`}`;
    // Both agree (the unit tests check it at length; here a guard against measuring a broken one).
    if (checkText(rules, hitText).matches.length !== 1 || matcher.check(hitText).matches.length !== 1)
      throw new Error('the hit text should match exactly one rule');
    const [scanOld, scanNew] = measure(
      () => checkText(rules, userText),
      () => matcher.check(userText),
    );
    const [bodyOld, bodyNew] = measure(
      () => {
        checkText(rules, promptTextOf(parseJson(bodyBuffer.toString('utf8'))));
        return addStreamUsageOption(bodyBuffer);
      },
      () => {
        const parsed = parseJson(bodyBuffer.toString('utf8'));
        matcher.check(promptTextOf(parsed));
        return addStreamUsageOption(bodyBuffer, { parsed });
      },
    );
    const [hitOld, hitNew] = measure(
      () => checkText(rules, hitText),
      () => matcher.check(hitText),
    );
    console.log(
      `| ${n} | ${set} | ${us(scanOld)} / ${us(scanNew)} | ${us(bodyOld)} / ${us(bodyNew)} | ${us(hitOld)} / ${us(hitNew)} |`,
    );
    matcher.dispose();
    for (const r of rules) r.dispose();
  }
}
