// The local username for a user provisioned by SSO: from the mapped username claim, else the email's
// local part, else the provider's subject; reduced to a safe alphabet and to the column's 100
// characters. Uniqueness is the caller's job (it tries `candidateUsernames` in order).
export const MAX_USERNAME = 100;

const SAFE = (c: string) =>
  (c >= 'a' && c <= 'z') ||
  (c >= 'A' && c <= 'Z') ||
  (c >= '0' && c <= '9') ||
  c === '.' ||
  c === '_' ||
  c === '-' ||
  c === '@';

export function baseUsername(input: {
  username?: string | null;
  email?: string | null;
  subject: string;
}): string {
  const pick = input.username?.trim() || input.email?.split('@')[0]?.trim() || input.subject;
  let out = '';
  for (const c of pick.slice(0, 200)) out += SAFE(c) ? c : '_';
  out = out.slice(0, MAX_USERNAME - 8);
  return out.replace(/^[._@-]+/, '') || 'sso-user';
}

/** `base`, `base-2`, `base-3`, ... then random suffixes supplied by the caller. */
export function candidateUsernames(base: string, randomSuffixes: string[]): string[] {
  const out = [base];
  for (let n = 2; n <= 5; n++) out.push(`${base}-${n}`);
  for (const s of randomSuffixes) out.push(`${base}-${s}`);
  return out;
}
