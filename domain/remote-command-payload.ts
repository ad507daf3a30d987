// Command payloads at rest: a proxy token inside a queued command is stored encrypted (Fernet) and only
// opened at the moment the command is handed to the agent, so the database never holds it in clear.
import { decryptSecret, encryptSecret, type FernetKey } from './crypto/fernet.ts';

const SEALED_FIELDS = ['proxy_token'] as const;
const suffix = '_sealed';

export function sealPayload(payload: Record<string, unknown>, key: FernetKey): string {
  const out: Record<string, unknown> = { ...payload };
  for (const field of SEALED_FIELDS) {
    const value = out[field];
    if (typeof value !== 'string') continue;
    delete out[field];
    out[field + suffix] = encryptSecret(value, key);
  }
  return JSON.stringify(out);
}

export function openPayload(text: string | null, key: FernetKey): Record<string, unknown> {
  if (!text) return {};
  const out = JSON.parse(text) as Record<string, unknown>;
  for (const field of SEALED_FIELDS) {
    const sealed = out[field + suffix];
    if (typeof sealed !== 'string') continue;
    delete out[field + suffix];
    out[field] = decryptSecret(sealed, key);
  }
  return out;
}
