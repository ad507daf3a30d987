// A refused single sign-on seen by a person in a browser. The SSO routes answer API clients with JSON
// `{error}`, but a browser that followed the identity provider's redirect would land on that raw JSON
// page. So a top-level navigation is sent back to `/login?sso_error=<code>` instead, and the login page
// shows the words for that code. Only a code travels in the URL, never text: a crafted link cannot make
// the login page say anything but these sentences (no phishing text through the query string).
// Shared by api/routes/sso (code from the refusal) and web/src/auth/login-page.tsx (words from code).

export const SSO_ERROR_WORDS = {
  failed: 'Single sign-on login failed. Try again, or sign in with your password.',
  expired: 'The sign-in request expired or was started in another browser; please start again.',
  disabled: 'Single sign-on is disabled for this tenant.',
  unknown: 'Unknown or disabled sign-in provider.',
  return_to: 'The sign-in link asked to return to another site; it was refused.',
} as const;

export type SsoErrorCode = keyof typeof SSO_ERROR_WORDS;

/** The code for a refusal, from its HTTP status and message (the API's own sentences). */
export function ssoErrorCode(status: number, message: string): SsoErrorCode {
  if (status === 403) return 'disabled';
  if (status === 404) return 'unknown';
  if (status === 400) return message.startsWith('return_to') ? 'return_to' : 'expired';
  return 'failed';
}

/** The words for a code from the query string; anything unknown reads as the generic failure. */
export function ssoErrorWords(code: string | null | undefined): string | null {
  if (!code) return null;
  return Object.hasOwn(SSO_ERROR_WORDS, code)
    ? SSO_ERROR_WORDS[code as SsoErrorCode]
    : SSO_ERROR_WORDS.failed;
}
