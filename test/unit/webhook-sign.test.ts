// Robot webhook signing (domain/alerts/webhook-sign.ts): the signature against a vector computed
// independently with `printf '1700000000000\nSECtest-secret' | openssl dgst -sha256 -hmac
// SECtest-secret -binary | base64`, the URL-encoding of `sign`, removal of `svc_robot_secret`, the
// secret resolution order, the text payload and which HTTP answers are retried.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  resolveRobotSecret,
  robotAnswer,
  robotPayload,
  robotSignature,
  signedRobotUrl,
  splitRobotSecret,
} from '../../domain/alerts/webhook-sign.ts';

const SECRET = 'SECtest-secret';
const TS = 1_700_000_000_000;
const VECTOR = 'LC7hxZ4wslL+P7j7gu1hoQ+wzByekL+yWgiUMekZs0g=';

test('the signature is base64 HMAC-SHA256(secret, timestamp + "\\n" + secret): known vector', () => {
  assert.equal(robotSignature(SECRET, TS), VECTOR);
  assert.notEqual(robotSignature(SECRET, TS + 1), VECTOR);
  assert.notEqual(robotSignature(`${SECRET}x`, TS), VECTOR);
});

test('the signed URL drops svc_robot_secret, keeps other parameters and URL-encodes sign', () => {
  const saved = `https://robot.example.com/send?access_token=abc&svc_robot_secret=${SECRET}`;
  const signed = signedRobotUrl(saved, SECRET, TS);
  assert.ok(!signed.includes('svc_robot_secret'));
  assert.ok(!signed.includes(SECRET));
  assert.ok(signed.includes(`sign=${encodeURIComponent(VECTOR)}`), signed);
  const u = new URL(signed);
  assert.equal(u.searchParams.get('access_token'), 'abc');
  assert.equal(u.searchParams.get('timestamp'), String(TS));
  assert.equal(u.searchParams.get('sign'), VECTOR);
});

test('without a secret the URL is sent unsigned (and any stale timestamp/sign is dropped)', () => {
  const signed = signedRobotUrl(
    'https://robot.example.com/send?access_token=abc&sign=old&timestamp=1',
    null,
    TS,
  );
  const u = new URL(signed);
  assert.equal(u.searchParams.get('sign'), null);
  assert.equal(u.searchParams.get('timestamp'), null);
  assert.equal(u.searchParams.get('access_token'), 'abc');
});

test('splitRobotSecret returns the secret and the URL without it; empty counts as none', () => {
  assert.deepEqual(splitRobotSecret('https://r.example.com/x?a=1&svc_robot_secret=s%2Bt'), {
    url: 'https://r.example.com/x?a=1',
    secret: 's+t',
  });
  assert.deepEqual(splitRobotSecret('https://r.example.com/x?svc_robot_secret='), {
    url: 'https://r.example.com/x',
    secret: null,
  });
  assert.throws(() => splitRobotSecret('not a url'));
});

test('secret resolution order: per-user, then global, then legacy in-URL', () => {
  assert.equal(resolveRobotSecret({ userSecret: 'u', globalSecret: 'g', legacySecret: 'l' }), 'u');
  assert.equal(resolveRobotSecret({ userSecret: null, globalSecret: 'g', legacySecret: 'l' }), 'g');
  assert.equal(resolveRobotSecret({ userSecret: null, globalSecret: undefined, legacySecret: 'l' }), 'l');
  assert.equal(resolveRobotSecret({ userSecret: null, globalSecret: '', legacySecret: 'l' }), 'l');
  assert.equal(resolveRobotSecret({ userSecret: null, globalSecret: null, legacySecret: null }), null);
});

test('payload is a text message "<severity> <title>: <message>"', () => {
  assert.deepEqual(robotPayload({ severity: 'critical', title: 'Quota', message: 'over 100%' }), {
    msgtype: 'text',
    text: { content: 'critical Quota: over 100%' },
  });
  assert.deepEqual(robotPayload({ severity: 'info', title: 'Hi', message: null }).text, {
    content: 'info Hi',
  });
});

test('answers: 2xx delivered, 429 and 5xx retried, other 4xx final', () => {
  assert.equal(robotAnswer(200), 'delivered');
  assert.equal(robotAnswer(204), 'delivered');
  assert.equal(robotAnswer(429), 'retry');
  assert.equal(robotAnswer(500), 'retry');
  assert.equal(robotAnswer(503), 'retry');
  assert.equal(robotAnswer(400), 'rejected');
  assert.equal(robotAnswer(404), 'rejected');
});
