// Where an identity provider sends its users back: the spec's OAuth2/OIDC callback and SAML ACS paths
// (document 2, "Single sign-on"). Pure and free of libraries: the API's registration check and the web
// app's SSO form (which builds the redirect URI from the name) both use it.

/**
 * The path a provider's redirect_uri must end with: the spec's OAuth2/OIDC callback
 * (`/api/sso/callback/<name>`) or SAML ACS (`/api/sso/acs/<name>`). Any other address can never
 * receive this provider's logins, so registering it would store a provider that cannot work.
 */
export function callbackPathOf(name: string, providerType: string): string {
  return `/api/sso/${providerType === 'saml' ? 'acs' : 'callback'}/${name}`;
}

/**
 * The 400 text when `redirectUri` does not end with the provider's callback path, else null. Only the
 * path is compared (origin and any reverse-proxy prefix are the administrator's); a URI that does not
 * parse is left to the field's URL check.
 */
export function redirectUriRefusal(redirectUri: unknown, name: string, providerType: string): string | null {
  if (typeof redirectUri !== 'string') return null;
  let pathname: string;
  try {
    pathname = new URL(redirectUri).pathname;
  } catch {
    return null;
  }
  const path = callbackPathOf(name, providerType);
  return pathname.endsWith(path) ? null : `redirect_uri: must end with ${path}`;
}
