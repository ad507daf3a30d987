// Where the process's secret keys come from, decided once. Production refuses to start without
// SVC_ENCRYPTION_KEY and SECRET_KEY (config/settings.ts). Outside production a missing key is replaced
// by a random one generated on first use and kept in `<data dir>/dev-secrets.json` (mode 0600), so a
// development install never encrypts with a key that is public in this repository, and restarts (and
// the worker and API processes sharing the data directory) keep reading what was written before.
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Settings } from '../config/settings.ts';
import { deriveFernetKey, type FernetKey } from '../domain/crypto/fernet.ts';

export type KeySettings = Pick<Settings, 'SVC_ENCRYPTION_KEY' | 'SECRET_KEY' | 'production' | 'dataDir'>;

export const DEV_SECRETS_FILE = 'dev-secrets.json';

interface DevSecrets {
  encryption_key: string;
  secret_key: string;
}

const devSecretsByDir = new Map<string, DevSecrets>();

function readDevSecrets(file: string): DevSecrets | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<DevSecrets>;
    if (typeof parsed.encryption_key === 'string' && typeof parsed.secret_key === 'string')
      return parsed as DevSecrets;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return undefined;
}

/** The development keys of a data directory, created (exclusively, 0600) on first use. */
export function developmentSecrets(dataDir: string): DevSecrets {
  const cached = devSecretsByDir.get(dataDir);
  if (cached) return cached;
  const file = path.join(dataDir, DEV_SECRETS_FILE);
  let secrets = readDevSecrets(file);
  if (!secrets) {
    mkdirSync(dataDir, { recursive: true });
    const fresh: DevSecrets = {
      encryption_key: randomBytes(32).toString('base64url'),
      secret_key: randomBytes(32).toString('base64url'),
    };
    try {
      // `wx`: when two processes start at once, one writes and the other reads what it wrote.
      writeFileSync(file, JSON.stringify(fresh), { mode: 0o600, flag: 'wx' });
      secrets = fresh;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      secrets = readDevSecrets(file);
      if (!secrets) throw new Error(`${file} exists but holds no keys; delete it to generate new ones`);
    }
  }
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  devSecretsByDir.set(dataDir, secrets);
  return secrets;
}

function encryptionSecret(settings: KeySettings): string {
  if (settings.SVC_ENCRYPTION_KEY) return settings.SVC_ENCRYPTION_KEY;
  if (settings.production) throw new Error('SVC_ENCRYPTION_KEY is required in production');
  return developmentSecrets(settings.dataDir).encryption_key;
}

function signingSecret(settings: KeySettings): string {
  if (settings.SECRET_KEY) return settings.SECRET_KEY;
  if (settings.production) throw new Error('SECRET_KEY is required in production');
  return developmentSecrets(settings.dataDir).secret_key;
}

/** Fernet key for stored secrets: SHA-256 of SVC_ENCRYPTION_KEY. Never stored. */
export function storageKey(settings: KeySettings): FernetKey {
  return deriveFernetKey(encryptionSecret(settings));
}

/** HMAC secret for proxy tokens, derived from SECRET_KEY with a purpose label so it is not reused. */
export function proxyTokenSecret(settings: KeySettings): string {
  return createHash('sha256')
    .update(`proxy-token:${signingSecret(settings)}`)
    .digest('base64url');
}
