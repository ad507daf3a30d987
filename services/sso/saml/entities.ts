// samlify entities built from a provider's stored config (domain/sso/saml-config.ts), and samlify's
// process-wide setup: the XML schema validator (@authenio/samlify-node-xmllint) is installed once on
// first use, so every response samlify parses is schema-checked before its signature is looked at.
// SP entities are cheap and built per request (a login's carries its own request id); IdP entities
// are cached per IdP configuration (see identityProviderOf).
import { createRequire } from 'node:module';
import type * as Xmllint from '@authenio/samlify-node-xmllint';
import type * as Samlify from 'samlify';
import {
  certificatePem,
  SAML_CLOCK_SKEW_MS,
  SAML_NAMEID_FORMATS,
  type SamlProviderConfig,
} from '../../../domain/sso/saml-config.ts';
import { POST_BINDING, REDIRECT_BINDING } from '../../../domain/sso/saml-metadata.ts';

// Loaded on first use, not when the app is imported: samlify and its emscripten schema validator take
// about 0.2 CPU-seconds to load, which every process that imports the app (each API instance and
// worker, each test file) paid whether or not it ever saw a SAML login. Both are CommonJS, so a
// synchronous require keeps this module's functions synchronous.
const requireOnUse = createRequire(import.meta.url);
let loaded: { samlify: typeof Samlify; xmllint: typeof Xmllint } | undefined;
const lib = () =>
  (loaded ??= {
    samlify: requireOnUse('samlify') as typeof Samlify,
    xmllint: requireOnUse('@authenio/samlify-node-xmllint') as typeof Xmllint,
  });

let validatorInstalled = false;

/**
 * node-xmllint (the engine of @authenio/samlify-node-xmllint) is an emscripten program run once per
 * call, and each run leaves two process-wide hooks behind:
 *   - an `uncaughtException` listener closing over that run's module (one leaked listener per
 *     validated response);
 *   - on exit, `process.stdout.once('drain', () => process.exit(status))` plus a `console.log(' ')`:
 *     the next time stdout drains (our JSON logs on a busy pipe), the WHOLE SERVER EXITS.
 * The call is synchronous, so the hooks it adds are exactly those present afterwards and not before:
 * they are removed at once, and console.log/console.error are silenced for its duration (the library
 * prints a blank line per run and the validation errors, which do not belong in our structured logs).
 */
export const leakFreeSchemaValidator = {
  validate(xml: string): Promise<unknown> {
    const exceptionListeners = new Set(process.listeners('uncaughtException'));
    const drainListeners = new Set(process.stdout.listeners('drain'));
    const { log, error } = console;
    console.log = () => {};
    console.error = () => {};
    try {
      return lib().xmllint.validate(xml);
    } finally {
      console.log = log;
      console.error = error;
      for (const l of process.listeners('uncaughtException'))
        if (!exceptionListeners.has(l)) process.removeListener('uncaughtException', l);
      for (const l of process.stdout.listeners('drain'))
        if (!drainListeners.has(l)) process.stdout.removeListener('drain', l as (...args: unknown[]) => void);
    }
  },
};

/** Installs the schema validator (idempotent). */
export function ensureSamlSetup(): void {
  if (validatorInstalled) return;
  lib().samlify.setSchemaValidator(leakFreeSchemaValidator);
  validatorInstalled = true;
}

export function serviceProviderOf(cfg: SamlProviderConfig, opts: { requestId?: string } = {}) {
  ensureSamlSetup();
  return lib().samlify.ServiceProvider({
    entityID: cfg.sp_entity_id,
    assertionConsumerService: [{ Binding: POST_BINDING, Location: cfg.acs_url }],
    nameIDFormat: [...SAML_NAMEID_FORMATS],
    authnRequestsSigned: false,
    wantAssertionsSigned: true,
    wantMessageSigned: false,
    clockDrifts: [-SAML_CLOCK_SKEW_MS, SAML_CLOCK_SKEW_MS],
    ...(opts.requestId ? { generateID: () => opts.requestId! } : {}),
  });
}

type IdentityProvider = ReturnType<typeof Samlify.IdentityProvider>;

/**
 * IdP entities are immutable, so they are kept per stored config (the key is the config itself, so a
 * re-registered provider never reuses a stale entity), at most 64: samlify prints a warning to the
 * console each time one is built (no SingleLogoutService), which would otherwise be once per login.
 */
const idpCache = new Map<string, IdentityProvider>();
const IDP_CACHE_MAX = 64;

export function identityProviderOf(cfg: SamlProviderConfig): IdentityProvider {
  const key = JSON.stringify([cfg.idp_entity_id, cfg.idp_sso_url, cfg.idp_signing_certs]);
  const cached = idpCache.get(key);
  if (cached) return cached;
  const built = buildIdentityProvider(cfg);
  if (idpCache.size >= IDP_CACHE_MAX) idpCache.delete(idpCache.keys().next().value!);
  idpCache.set(key, built);
  return built;
}

function buildIdentityProvider(cfg: SamlProviderConfig): IdentityProvider {
  ensureSamlSetup();
  return lib().samlify.IdentityProvider({
    entityID: cfg.idp_entity_id,
    signingCert: cfg.idp_signing_certs.map(certificatePem),
    singleSignOnService: [{ Binding: REDIRECT_BINDING, Location: cfg.idp_sso_url }],
    wantAuthnRequestsSigned: false,
    isAssertionEncrypted: false,
  });
}
