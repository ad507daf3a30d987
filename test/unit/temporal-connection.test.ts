// The Temporal connection options built from the settings (config/temporal-connection.ts): what is read
// from which file, the refusals in words, and the API key / client private key kept out of every
// printable form while still reaching both SDKs (checked through the SDKs' own option compilers).
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { inspect } from 'node:util';
import { Connection } from '@temporalio/client';
import pino from 'pino';
import { loadSettings, SettingsError } from '../../config/settings.ts';
import { type TemporalConnectionSettings, temporalConnection } from '../../config/temporal-connection.ts';
import { createTestPki } from '../fixtures/tls-certs.ts';

const require = createRequire(import.meta.url);
const { toNativeClientOptions } = require('@temporalio/worker/lib/connection-options.js');
const { filterNullAndUndefined } = require('@temporalio/common/lib/internal-workflow/index.js');

const pki = createTestPki('temporal.internal');
const API_KEY = 'tcld-apikey-0123456789abcdef-SECRET';
const keyBody = (pem: string) => pem.split('\n').filter((l) => l && !l.startsWith('-----'))[1]!;
const cluster = (extra: Partial<TemporalConnectionSettings> = {}): TemporalConnectionSettings => ({
  TEMPORAL_ADDRESS: 'temporal.internal:7233',
  ...extra,
});
const refused = (s: TemporalConnectionSettings, words: RegExp) =>
  assert.throws(
    () => temporalConnection(s, s.TEMPORAL_ADDRESS ?? '127.0.0.1:7233'),
    (e: Error) => e instanceof SettingsError && words.test(e.message),
  );

test('no TEMPORAL_ADDRESS: the embedded dev server, plain gRPC; cluster options without it are refused', () => {
  const c = temporalConnection({ TEMPORAL_ADDRESS: undefined }, '127.0.0.1:7244');
  assert.deepEqual(c.client, { address: '127.0.0.1:7244' });
  assert.deepEqual(c.native, { address: '127.0.0.1:7244' });
  assert.match(c.summary, /embedded dev server, plain gRPC/);
  refused(
    { TEMPORAL_ADDRESS: undefined, TEMPORAL_API_KEY: API_KEY, TEMPORAL_TLS: true },
    /^TEMPORAL_TLS, TEMPORAL_API_KEY apply to the Temporal cluster at TEMPORAL_ADDRESS, which is not set/,
  );
  refused(
    { TEMPORAL_ADDRESS: undefined, TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCertPath },
    /TEMPORAL_TLS_SERVER_CA_CERT_PATH apply to .* Set TEMPORAL_ADDRESS or remove them/,
  );
});

test('TEMPORAL_ADDRESS alone is plain gRPC; TEMPORAL_TLS=true alone is TLS with the system CAs', () => {
  const plain = temporalConnection(cluster(), 'temporal.internal:7233');
  assert.deepEqual(plain.client, { address: 'temporal.internal:7233' });
  assert.equal(plain.native.tls, undefined);
  const tls = temporalConnection(cluster({ TEMPORAL_TLS: true }), 'temporal.internal:7233');
  assert.deepEqual(tls.client.tls, {});
  assert.equal(tls.summary, 'temporal.internal:7233 (TLS, system CAs)');
  assert.match(toNativeClientOptions(filterNullAndUndefined({ ...tls.native })).targetUrl, /^https:\/\//);
});

test('server CA and server name are read into both connections; TLS turns on without TEMPORAL_TLS', () => {
  const c = temporalConnection(
    cluster({
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCertPath,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    }),
    'temporal.internal:7233',
  );
  for (const o of [c.client, c.native]) {
    const tls = o.tls as { serverRootCACertificate: Buffer; serverNameOverride: string };
    assert.equal(Buffer.from(tls.serverRootCACertificate).toString(), pki.caCertPem);
    assert.equal(tls.serverNameOverride, 'temporal.internal');
  }
  assert.match(c.summary, /TLS, server CA .*ca\.pem, server name temporal\.internal/);
  const native = toNativeClientOptions(filterNullAndUndefined(c.native));
  assert.equal(native.tls.domain, 'temporal.internal');
  assert.equal(native.tls.serverRootCaCert.toString(), pki.caCertPem);
  assert.equal(native.apiKey, null);
});

test('mTLS: certificate and key from their files reach both SDKs', () => {
  const c = temporalConnection(
    cluster({
      TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCertPath,
      TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKeyPath,
    }),
    'temporal.internal:7233',
  );
  const pair = (c.client.tls as { clientCertPair: { crt: Buffer; key: Buffer } }).clientCertPair;
  assert.equal(Buffer.from(pair.key).toString(), pki.clientKeyPem);
  const native = toNativeClientOptions(filterNullAndUndefined(c.native));
  assert.equal(native.tls.clientTlsOptions.clientPrivateKey.toString(), pki.clientKeyPem);
  assert.match(native.tls.clientTlsOptions.clientCert.toString(), /^-----BEGIN CERTIFICATE-----/);
  assert.match(c.summary, /mTLS client certificate .*client\.pem/);
  // The client SDK builds its channel credentials from them without complaint.
  const lazy = Connection.lazy(c.client);
  void lazy.close();
});

test('half-configured mTLS is refused in words, either half', () => {
  refused(
    cluster({ TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCertPath }),
    /^TEMPORAL_TLS_CLIENT_CERT_PATH is set but TEMPORAL_TLS_CLIENT_KEY_PATH is not: mTLS needs the client certificate and its private key/,
  );
  refused(
    cluster({ TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKeyPath }),
    /^TEMPORAL_TLS_CLIENT_KEY_PATH is set but TEMPORAL_TLS_CLIENT_CERT_PATH is not/,
  );
});

test('unreadable or wrong files are refused, naming the setting and never echoing the content', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-tls-bad-'));
  refused(
    cluster({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'missing.pem') }),
    /^Cannot read TEMPORAL_TLS_SERVER_CA_CERT_PATH \(.*missing\.pem\): no such file\.$/,
  );
  const notPem = path.join(dir, 'ca.txt');
  writeFileSync(notPem, 'not a certificate');
  refused(
    cluster({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: notPem }),
    /TEMPORAL_TLS_SERVER_CA_CERT_PATH \(.*ca\.txt\) does not hold a PEM certificate/,
  );
  // The key where the certificate belongs (and the reverse): refused, and the key is not in the message.
  const swapped = path.join(dir, 'swapped.pem');
  copyFileSync(pki.clientKeyPath, swapped);
  assert.throws(
    () =>
      temporalConnection(
        cluster({ TEMPORAL_TLS_CLIENT_CERT_PATH: swapped, TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKeyPath }),
        'x:1',
      ),
    (e: Error) =>
      /TEMPORAL_TLS_CLIENT_CERT_PATH .* does not hold a PEM certificate/.test(e.message) &&
      !e.message.includes(keyBody(pki.clientKeyPem)),
  );
  refused(
    cluster({
      TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCertPath,
      TEMPORAL_TLS_CLIENT_KEY_PATH: pki.caCertPath,
    }),
    /TEMPORAL_TLS_CLIENT_KEY_PATH .* does not hold a PEM private key/,
  );
});

test('TEMPORAL_TLS=false with TLS options, or with an API key (clear text), is refused', () => {
  refused(cluster({ TEMPORAL_TLS: false, TEMPORAL_API_KEY: API_KEY }), /would be sent in clear text/);
  refused(
    cluster({
      TEMPORAL_TLS: false,
      TEMPORAL_TLS_SERVER_NAME: 'a',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCertPath,
    }),
    /^TEMPORAL_TLS is false but TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME are set/,
  );
});

test('the API key and the client private key reach the SDKs but no printable form, log or summary', () => {
  const c = temporalConnection(
    cluster({
      TEMPORAL_API_KEY: API_KEY,
      TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCertPath,
      TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKeyPath,
    }),
    'temporal.internal:7233',
  );
  // They are there for the SDKs: the client's key as a function, the worker's compiled options.
  assert.equal(typeof c.client.apiKey, 'function');
  assert.equal((c.client.apiKey as () => string)(), API_KEY);
  const native = toNativeClientOptions(filterNullAndUndefined(c.native));
  assert.equal(native.apiKey, API_KEY);
  assert.match(native.targetUrl, /^https:/);
  assert.match(c.summary, /API key/);

  let logged = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      logged += chunk.toString();
      done();
    },
  });
  const logger = pino(sink);
  logger.info({ temporal: c.client, native: c.native, tls: c.client.tls }, 'connecting');
  const printed = [
    inspect(c, { depth: null }),
    inspect(c.client, { depth: null, showHidden: false }),
    inspect(c.native, { depth: null }),
    inspect(c.native.tls, { depth: null }),
    JSON.stringify(c),
    JSON.stringify(c.native.tls),
    `${c.summary}`,
    logged,
  ];
  for (const text of printed) {
    assert.ok(!text.includes(API_KEY), `API key printed: ${text.slice(0, 200)}`);
    assert.ok(!text.includes(keyBody(pki.clientKeyPem)), 'client private key printed');
  }
  assert.match(inspect(c.native), /apiKey: '\[redacted\]'/);
  assert.match(logged, /\[redacted\]/);
});

test('the settings parse from the environment and config.json (TEMPORAL_TLS as a boolean word)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-settings-tls-'));
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ temporal_tls_server_name: 'from-file' }));
  const s = loadSettings({
    SVC_DATA_DIR: dir,
    TEMPORAL_ADDRESS: 'temporal.internal:7233',
    TEMPORAL_TLS: 'false',
    TEMPORAL_API_KEY: API_KEY,
  });
  assert.equal(s.TEMPORAL_TLS, false);
  assert.equal(s.TEMPORAL_TLS_SERVER_NAME, 'from-file');
  assert.equal(loadSettings({ SVC_DATA_DIR: dir, TEMPORAL_TLS: 'on' }).TEMPORAL_TLS, true);
  assert.equal(loadSettings({ SVC_DATA_DIR: dir }).TEMPORAL_TLS, undefined);
  assert.throws(() => temporalConnection(s, s.TEMPORAL_ADDRESS!), /clear text/);
});
