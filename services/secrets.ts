// Where the process's secret keys come from, decided once. Outside production a missing key falls back
// to a development-only constant (loudly warned about at startup); production refuses to start
// without them (bin/settings.ts).
import { createHash } from 'node:crypto';
import type { Settings } from '../config/settings.ts';
import { deriveFernetKey, type FernetKey } from '../domain/crypto/fernet.ts';

const DEV_ENCRYPTION_KEY = 'svc-development-only-encryption-key-do-not-use-in-production';
const DEV_SECRET_KEY = 'svc-development-only-secret-key-do-not-use-in-production';

type KeySettings = Pick<Settings, 'SVC_ENCRYPTION_KEY' | 'SECRET_KEY' | 'production'>;

/** Fernet key for stored secrets: SHA-256 of SVC_ENCRYPTION_KEY. Never stored. */
export function storageKey(settings: KeySettings): FernetKey {
  if (settings.production && !settings.SVC_ENCRYPTION_KEY)
    throw new Error('SVC_ENCRYPTION_KEY is required in production');
  return deriveFernetKey(settings.SVC_ENCRYPTION_KEY || DEV_ENCRYPTION_KEY);
}

/** HMAC secret for proxy tokens, derived from SECRET_KEY with a purpose label so it is not reused. */
export function proxyTokenSecret(settings: KeySettings): string {
  if (settings.production && !settings.SECRET_KEY) throw new Error('SECRET_KEY is required in production');
  return createHash('sha256')
    .update(`proxy-token:${settings.SECRET_KEY || DEV_SECRET_KEY}`)
    .digest('base64url');
}
