// Encryption of stored provider keys (api_key_store) and the proxy's decryption of them.
//
// Decrypting one Fernet token costs about 25 us (HMAC check + AES-CBC), a tenth of the proxy's whole
// budget, so plaintexts are remembered for a few seconds, keyed by their ciphertext. A ciphertext
// always decrypts to the same key, so the memo can never hand out a deleted or replaced key: the
// proxy still reads which ciphertext is current from the database on every call; the memo only bounds
// how long a plaintext stays in this process's memory.
import { decryptSecret, encryptSecret, keyHash, maskKey } from '../domain/crypto/fernet.ts';
import { type KeySettings, storageKey } from './secrets.ts';

const PLAINTEXT_TTL_MS = 5_000;
const MAX_REMEMBERED = 256;

export function storedKeyCipher(settings: KeySettings) {
  const key = storageKey(settings);
  const remembered = new Map<string, { plain: string; until: number }>();

  return {
    /** True when stored keys are protected by the development-only fallback key. */
    usingDevelopmentKey: !settings.SVC_ENCRYPTION_KEY,

    /** Ciphertext, identifying hash and masked form of a new key. */
    seal(plain: string): { encryptedKey: string; keyHash: string; masked: string } {
      return { encryptedKey: encryptSecret(plain, key), keyHash: keyHash(plain), masked: maskKey(plain) };
    },

    /** The masked form of a stored key for listings; '****' when it cannot be decrypted. */
    masked(encryptedKey: string): string {
      try {
        return maskKey(decryptSecret(encryptedKey, key));
      } catch {
        return '****';
      }
    },

    /** The plaintext of a stored key (memoised briefly). Throws FernetError for a bad ciphertext. */
    open(encryptedKey: string): string {
      const now = Date.now();
      const hit = remembered.get(encryptedKey);
      if (hit !== undefined && hit.until > now) return hit.plain;
      const plain = decryptSecret(encryptedKey, key);
      if (remembered.size >= MAX_REMEMBERED) {
        for (const [c, v] of remembered) if (v.until <= now) remembered.delete(c);
        if (remembered.size >= MAX_REMEMBERED) remembered.clear();
      }
      remembered.set(encryptedKey, { plain, until: now + PLAINTEXT_TTL_MS });
      return plain;
    },
  };
}

export type StoredKeyCipher = ReturnType<typeof storedKeyCipher>;
