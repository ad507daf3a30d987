// The vault cipher as SSO uses it: client secrets, PKCE verifiers and provider tokens are stored only
// as Fernet ciphertext under the storage key (services/secrets.ts). Kept in one place so every SSO file
// encrypts the same way and no file handles the key itself.
import { decryptSecret, encryptSecret } from '../../domain/crypto/fernet.ts';
import { type KeySettings, storageKey } from '../secrets.ts';

export interface SsoCipherDeps {
  settings: KeySettings;
}

export const sealSsoSecret = (deps: SsoCipherDeps, plain: string): string =>
  encryptSecret(plain, storageKey(deps.settings));

/** Throws FernetError for a ciphertext that was not written with this key. */
export const openSsoSecret = (deps: SsoCipherDeps, ciphertext: string): string =>
  decryptSecret(ciphertext, storageKey(deps.settings));
