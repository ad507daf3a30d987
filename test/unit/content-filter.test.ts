// Content filter rules, pure (domain/content-filter): keyword and RE2 regex matching, the verdict
// order, pattern validation (backreferences / lookarounds refused, named), a regex bomb in bounded
// time, and the prompt text taken from proxy request bodies (user text only).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { promptTextOf } from '../../domain/content-filter/prompt-text.ts';
import {
  checkText,
  compileRules,
  type FilterRule,
  patternProblem,
  verdictOf,
} from '../../domain/content-filter/rules.ts';

const rule = (over: Partial<FilterRule>): FilterRule => ({
  id: 1,
  pattern: 'secret',
  type: 'keyword',
  severity: 'medium',
  action: 'warn',
  description: null,
  isEnabled: true,
  tenantId: null,
  ...over,
});

test('keyword rules are case-insensitive substrings, regex rules run on RE2; disabled rules never match', () => {
  const rules = compileRules([
    rule({ id: 1, pattern: 'SeCrEt' }),
    rule({ id: 2, type: 'regex', pattern: 'sk-[a-z0-9]{8}', action: 'block' }),
    rule({ id: 3, pattern: 'hello', isEnabled: false, action: 'block' }),
    rule({ id: 4, pattern: 'a.b', action: 'review' }),
  ]);
  assert.deepEqual(checkText(rules, 'hello there'), { verdict: 'clean', matches: [] });
  const warn = checkText(rules, 'my SECRET plan');
  assert.equal(warn.verdict, 'warn');
  assert.deepEqual(
    warn.matches.map((m) => m.rule_id),
    [1],
  );
  // keyword "a.b" is literal: no regex meaning of the dot
  assert.equal(checkText(rules, 'axb').verdict, 'clean');
  assert.equal(checkText(rules, 'a.b').verdict, 'review');
  assert.equal(checkText(rules, 'a.b and secret and sk-abcdef12').verdict, 'blocked');
});

test('verdict: blocked over review over warn over clean', () => {
  assert.equal(verdictOf([]), 'clean');
  assert.equal(verdictOf([{ action: 'warn' }]), 'warn');
  assert.equal(verdictOf([{ action: 'warn' }, { action: 'review' }]), 'review');
  assert.equal(verdictOf([{ action: 'review' }, { action: 'block' }, { action: 'warn' }]), 'blocked');
});

test('invalid patterns are named; backreferences and lookarounds are refused', () => {
  assert.equal(patternProblem('regex', 'ab+c'), null);
  assert.match(patternProblem('regex', '(abc') ?? '', /missing \)/);
  assert.match(patternProblem('regex', '(a)\\1') ?? '', /invalid escape sequence/);
  assert.match(patternProblem('regex', '(?=a)b') ?? '', /invalid perl operator/);
  assert.match(patternProblem('keyword', '   ') ?? '', /empty/);
  assert.match(patternProblem('regex', 'a'.repeat(1001)) ?? '', /longer than 1000/);
  assert.equal(patternProblem('keyword', '(a)\\1'), null);
});

test('a regex bomb runs in linear time on RE2', () => {
  const [bomb] = compileRules([rule({ type: 'regex', pattern: '(a+)+$' })]);
  // 100 KB of "a" then "!": exponential on a backtracking engine; RE2 scans it once.
  const text = `${'a'.repeat(100 * 1024)}!`;
  assert.equal(bomb!.test(text, text), false);
  assert.equal(bomb!.test('aaaa', 'aaaa'), true);
});

test('prompt text: user messages and prompts only, in every provider format', () => {
  assert.equal(
    promptTextOf({
      messages: [
        { role: 'system', content: 'SYSTEM' },
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'ASSISTANT' },
        { role: 'user', content: [{ type: 'text', text: 'two' }, { type: 'image_url' }] },
      ],
    }),
    'one\ntwo',
  );
  assert.equal(promptTextOf({ prompt: ['a', 'b'] }), 'a\nb');
  assert.equal(promptTextOf({ input: 'codex' }), 'codex');
  assert.equal(
    promptTextOf({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'x' }] }] }),
    'x',
  );
  assert.equal(
    promptTextOf({
      contents: [
        { role: 'user', parts: [{ text: 'gem' }] },
        { role: 'model', parts: [{ text: 'M' }] },
      ],
    }),
    'gem',
  );
  assert.equal(promptTextOf({ system: 'S', tools: [{ description: 'T' }] }), '');
  assert.equal(promptTextOf(undefined), '');
});

test('prompt text: tool results and assistant turns are not user text, in every format that carries them', () => {
  // Anthropic: a tool_result block rides in a user message (its content a string or text blocks).
  assert.equal(
    promptTextOf({
      system: [{ type: 'text', text: 'SYSTEM' }],
      messages: [
        { role: 'user', content: 'ask' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: { q: 'USE' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't', content: 'RESULT' },
            { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'RESULT2' }] },
            { type: 'text', text: 'next' },
          ],
        },
      ],
    }),
    'ask\nnext',
  );
  // OpenAI chat: tool messages; responses: function_call_output items; Gemini: functionResponse parts.
  assert.equal(
    promptTextOf({
      messages: [
        { role: 'tool', tool_call_id: 'c', content: 'RESULT' },
        { role: 'user', content: 'u' },
      ],
    }),
    'u',
  );
  assert.equal(
    promptTextOf({
      input: [
        { type: 'function_call_output', call_id: 'c', output: 'RESULT' },
        { role: 'user', content: 'u' },
      ],
    }),
    'u',
  );
  assert.equal(
    promptTextOf({
      contents: [
        {
          role: 'user',
          parts: [{ functionResponse: { name: 'f', response: { r: 'RESULT' } } }, { text: 'g' }],
        },
      ],
    }),
    'g',
  );
});
