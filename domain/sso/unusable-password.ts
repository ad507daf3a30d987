// Users provisioned by SSO have no password. Their password_hash is a marker plus a bcrypt hash of
// random bytes nobody knows: password login compares against the inner hash (`comparablePasswordHash`),
// so such a user costs the same bcrypt comparison as any other (no timing hint that the name is
// SSO-only) and can never match, while `hasUsablePassword` tells the unlink rule that this user's only
// way in is an SSO identity. Setting a password (admin reset) replaces the marker.
const MARKER = '!sso!';

export const unusablePasswordHash = (bcryptOfRandom: string): string => `${MARKER}${bcryptOfRandom}`;
export const hasUsablePassword = (stored: string): boolean => !stored.startsWith(MARKER);
export const comparablePasswordHash = (stored: string): string =>
  stored.startsWith(MARKER) ? stored.slice(MARKER.length) : stored;
