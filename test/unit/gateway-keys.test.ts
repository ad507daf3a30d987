// domain/gateway-keys.ts: the key's shape (the proxy branches on it before any hashing), the tool a
// CLI's User-Agent names (the User-Agents the four CLIs send), and the key's own limits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  gatewayKeyPrefix,
  gatewayToolName,
  isGatewayKey,
  keyLimitExceeded,
  newGatewayKey,
} from '../../domain/gateway-keys.ts';

test('a new key has the contract shape; near misses are not keys', () => {
  const key = newGatewayKey();
  assert.match(key, /^svcgk_[A-Za-z0-9_-]{43}$/);
  assert.ok(isGatewayKey(key));
  assert.equal(gatewayKeyPrefix(key).length, 12);
  assert.notEqual(newGatewayKey(), key);
  assert.ok(!isGatewayKey(key.slice(0, -1)), 'one character short');
  assert.ok(!isGatewayKey(`${key}A`), 'one character long');
  assert.ok(!isGatewayKey(`svcup_${key.slice(6)}`), 'an upload token');
  assert.ok(!isGatewayKey(`${key.slice(0, 20)}.${key.slice(21)}`), 'not base64url');
});

test("the CLIs' User-Agents name their tool; anything else is `gateway`", () => {
  assert.equal(gatewayToolName('claude-cli/2.0.14 (external, cli)'), 'claude-code');
  assert.equal(gatewayToolName('codex_cli_rs/0.50.0 (Ubuntu 24.4.0; x86_64) xterm'), 'codex');
  assert.equal(gatewayToolName('GeminiCLI/0.9.0 (linux; x64)'), 'gemini-cli');
  assert.equal(gatewayToolName('QwenCode/0.0.14 (linux; x64)'), 'qwen-code');
  assert.equal(gatewayToolName('OpenAI/JS 5.1.0'), 'gateway');
  assert.equal(gatewayToolName(undefined), 'gateway');
});

test('the first limit with no room for one more request is named; none set, none refused', () => {
  const none = { dailyTokenLimit: null, monthlyTokenLimit: null, dailyRequestLimit: null };
  assert.equal(keyLimitExceeded(none, { dayRequests: 1e9, dayTokens: 1e9, monthTokens: 1e9 }), null);
  const limits = { dailyTokenLimit: 100, monthlyTokenLimit: 1000, dailyRequestLimit: 5 };
  assert.equal(keyLimitExceeded(limits, { dayRequests: 4, dayTokens: 99, monthTokens: 999 }), null);
  assert.match(
    keyLimitExceeded(limits, { dayRequests: 5, dayTokens: 0, monthTokens: 0 })!,
    /daily request limit is reached \(5 of 5 used\)/,
  );
  assert.match(keyLimitExceeded(limits, { dayRequests: 0, dayTokens: 100, monthTokens: 0 })!, /daily token/);
  assert.match(
    keyLimitExceeded(limits, { dayRequests: 0, dayTokens: 0, monthTokens: 1000 })!,
    /monthly token/,
  );
});
