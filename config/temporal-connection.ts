// How this service connects to Temporal: ONE function turns the settings into the connection options
// of both SDK connections, so the API's client (`@temporalio/client` Connection, services/temporal.ts and
// the schedules the worker ensures) and the worker's own connection (`@temporalio/worker`
// NativeConnection, bin/worker-runtime.ts) can never disagree about TLS, mTLS or the API key.
//
// Settings (config/settings.ts; the names of the `temporal` CLI's environment configuration):
//   TEMPORAL_ADDRESS                    host:port of the cluster's frontend (unset: the embedded dev server)
//   TEMPORAL_TLS                        true/false; unset = on when any option below is set
//   TEMPORAL_TLS_SERVER_CA_CERT_PATH    PEM file of the CA that signed the server's certificate
//   TEMPORAL_TLS_SERVER_NAME            server name (SNI) to verify instead of the address's host
//   TEMPORAL_TLS_CLIENT_CERT_PATH       mTLS: PEM client certificate (needs the key below)
//   TEMPORAL_TLS_CLIENT_KEY_PATH        mTLS: PEM private key of that certificate (needs the cert above)
//   TEMPORAL_API_KEY                    Temporal Cloud API key (sent as a bearer token; implies TLS)
//
// Refusals, each a SettingsError in words, at startup: half-configured mTLS (a certificate without its
// key or the reverse), a file that cannot be read or holds no PEM block, TLS options with TEMPORAL_TLS
// false, an API key that would travel in clear text, and any of these options without
// TEMPORAL_ADDRESS (the embedded dev server speaks plain gRPC only).
//
// Secrets: the API key and the client private key must reach the SDK, so the built objects hold them,
// but their printable forms do not: util.inspect, JSON.stringify and pino (which honours toJSON) see
// `[redacted]`, and the client's apiKey is a function, not a string. `summary` is the one line to log.
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import type { ConnectionOptions } from '@temporalio/client';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { type Settings, SettingsError } from './settings.ts';

export type TemporalConnectionSettings = Pick<
  Settings,
  | 'TEMPORAL_ADDRESS'
  | 'TEMPORAL_TLS'
  | 'TEMPORAL_TLS_SERVER_CA_CERT_PATH'
  | 'TEMPORAL_TLS_SERVER_NAME'
  | 'TEMPORAL_TLS_CLIENT_CERT_PATH'
  | 'TEMPORAL_TLS_CLIENT_KEY_PATH'
  | 'TEMPORAL_API_KEY'
>;

export interface TemporalConnection {
  address: string;
  /** For `Connection.connect` of @temporalio/client (the API, schedules, tools). */
  client: ConnectionOptions;
  /** For `NativeConnection.connect` of @temporalio/worker (the worker). */
  native: NativeConnectionOptions;
  /** A log line: the address and the security in use, never a secret. */
  summary: string;
}

const SECURITY_OPTIONS = [
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_API_KEY',
] as const;

/**
 * The connection options for `address`: the cluster at TEMPORAL_ADDRESS with its TLS/mTLS/API-key
 * options, or, when TEMPORAL_ADDRESS is unset, the embedded dev server at `address` in plain gRPC.
 */
export function temporalConnection(
  settings: TemporalConnectionSettings,
  address: string,
): TemporalConnection {
  const given = SECURITY_OPTIONS.filter((k) => settings[k] !== undefined);
  if (!settings.TEMPORAL_ADDRESS) {
    if (given.length || settings.TEMPORAL_TLS)
      throw new SettingsError(
        `${[...(settings.TEMPORAL_TLS ? ['TEMPORAL_TLS'] : []), ...given].join(', ')} apply to the Temporal cluster at TEMPORAL_ADDRESS, which is not set; the embedded dev server speaks plain gRPC. Set TEMPORAL_ADDRESS or remove them.`,
      );
    return plain(address, `${address} (embedded dev server, plain gRPC)`);
  }
  const certPath = settings.TEMPORAL_TLS_CLIENT_CERT_PATH;
  const keyPath = settings.TEMPORAL_TLS_CLIENT_KEY_PATH;
  if (certPath && !keyPath)
    throw new SettingsError(
      'TEMPORAL_TLS_CLIENT_CERT_PATH is set but TEMPORAL_TLS_CLIENT_KEY_PATH is not: mTLS needs the client certificate and its private key. Set both, or neither.',
    );
  if (keyPath && !certPath)
    throw new SettingsError(
      'TEMPORAL_TLS_CLIENT_KEY_PATH is set but TEMPORAL_TLS_CLIENT_CERT_PATH is not: mTLS needs the client certificate and its private key. Set both, or neither.',
    );
  if (settings.TEMPORAL_TLS === false) {
    if (settings.TEMPORAL_API_KEY)
      throw new SettingsError(
        'TEMPORAL_API_KEY is set but TEMPORAL_TLS is false: the API key would be sent in clear text. Remove TEMPORAL_TLS=false (an API key turns TLS on).',
      );
    if (given.length)
      throw new SettingsError(
        `TEMPORAL_TLS is false but ${given.join(', ')} ${given.length > 1 ? 'are' : 'is'} set: remove TEMPORAL_TLS=false, or remove the TLS options.`,
      );
  }
  const tlsOn = settings.TEMPORAL_TLS ?? given.length > 0;
  if (!tlsOn) return plain(address, `${address} (plain gRPC)`);

  const tls: NonNullable<Exclude<ConnectionOptions['tls'], boolean | null>> = {};
  const said = ['TLS'];
  if (settings.TEMPORAL_TLS_SERVER_CA_CERT_PATH) {
    tls.serverRootCACertificate = readPem(
      'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
      settings.TEMPORAL_TLS_SERVER_CA_CERT_PATH,
      'CERTIFICATE',
    );
    said.push(`server CA ${settings.TEMPORAL_TLS_SERVER_CA_CERT_PATH}`);
  } else said.push('system CAs');
  if (settings.TEMPORAL_TLS_SERVER_NAME) {
    tls.serverNameOverride = settings.TEMPORAL_TLS_SERVER_NAME;
    said.push(`server name ${settings.TEMPORAL_TLS_SERVER_NAME}`);
  }
  if (certPath && keyPath) {
    const crt = readPem('TEMPORAL_TLS_CLIENT_CERT_PATH', certPath, 'CERTIFICATE');
    const key = readPem('TEMPORAL_TLS_CLIENT_KEY_PATH', keyPath, 'PRIVATE KEY');
    tls.clientCertPair = redacted({ crt, key }, { crt: `<certificate ${certPath}>`, key: '[redacted]' });
    said.push(`mTLS client certificate ${certPath}`);
  }
  const apiKey = settings.TEMPORAL_API_KEY;
  if (apiKey) said.push('API key');
  const summary = `${address} (${said.join(', ')})`;
  const shown = { address, tls: summary, ...(apiKey ? { apiKey: '[redacted]' } : {}) };
  const client: ConnectionOptions = redacted(
    { address, tls, ...(apiKey ? { apiKey: () => apiKey } : {}) },
    shown,
  );
  const native: NativeConnectionOptions = redacted({ address, tls, ...(apiKey ? { apiKey } : {}) }, shown);
  return { address, client, native, summary };
}

function plain(address: string, summary: string): TemporalConnection {
  return { address, client: { address }, native: { address }, summary };
}

/**
 * Gives `value` printable forms that show `shown` instead (non-enumerable, so the SDK's own copies of
 * the options, made by spreading, carry the values and not these hooks).
 */
function redacted<T extends object>(value: T, shown: Record<string, unknown>): T {
  Object.defineProperty(value, 'toJSON', { value: () => shown, enumerable: false });
  Object.defineProperty(value, inspect.custom, { value: () => shown, enumerable: false });
  return value;
}

function readPem(setting: string, file: string, kind: 'CERTIFICATE' | 'PRIVATE KEY'): Buffer {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new SettingsError(
      `Cannot read ${setting} (${file}): ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? 'unreadable')}.`,
    );
  }
  // A PEM block of the right kind ("-----BEGIN CERTIFICATE-----", "-----BEGIN [RSA |EC ]PRIVATE KEY-----").
  const text = data.toString('latin1');
  const begin = text.indexOf('-----BEGIN ');
  const lineEnd = begin < 0 ? -1 : text.indexOf('-----', begin + 11);
  if (begin < 0 || lineEnd < 0 || !text.slice(begin + 11, lineEnd).endsWith(kind))
    throw new SettingsError(
      `${setting} (${file}) does not hold a PEM ${kind === 'CERTIFICATE' ? 'certificate' : 'private key'} ("-----BEGIN ${kind}-----").`,
    );
  return data;
}
