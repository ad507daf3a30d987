// Per-application caches for access decisions: security settings (60 s, spec Limits "Login-attempt
// settings cache"), role templates (60 s; seeded, rarely changed) and the tenants whose audit log is
// off (60 s). Keyed by the deps object, so
// several apps in one process (tests) never share them. Time comes from deps.now().
import { auditRepository } from '../db/repositories/audit.ts';
import { permissionsRepository } from '../db/repositories/permissions.ts';
import { securitySettingsRepository } from '../db/repositories/security-settings.ts';
import {
  DEFAULT_SECURITY_SETTINGS,
  type SecuritySettings,
  securitySettingsSchema,
} from '../domain/security-settings.ts';
import type { AppDeps } from './deps.ts';

export const SETTINGS_CACHE_MS = 60_000;

class TtlValue<T> {
  private value?: T;
  private at = 0;
  private inflight?: Promise<T>;
  constructor(
    private readonly load: () => Promise<T>,
    private readonly now: () => Date,
    private readonly ttlMs: number,
  ) {}
  get(): Promise<T> | T {
    const t = this.now().getTime();
    if (this.value !== undefined && t - this.at < this.ttlMs && t >= this.at) return this.value;
    this.inflight ??= this.load().then(
      (v) => {
        this.value = v;
        this.at = this.now().getTime();
        this.inflight = undefined;
        return v;
      },
      (err) => {
        this.inflight = undefined;
        throw err;
      },
    );
    return this.inflight;
  }
  invalidate() {
    this.value = undefined;
  }
}

export const DEFAULTS: SecuritySettings = Object.fromEntries(
  DEFAULT_SECURITY_SETTINGS.map((s) => [s.key, s.value]),
) as SecuritySettings;

/** Stored values over defaults; a stored value that does not validate falls back to its default. */
export function mergeSecuritySettings(rows: { key: string; value: string | null }[]): SecuritySettings {
  const out: SecuritySettings = { ...DEFAULTS };
  const shape = securitySettingsSchema.shape as Record<
    string,
    { safeParse(v: unknown): { success: boolean; data?: unknown } }
  >;
  for (const r of rows) {
    const field = shape[r.key];
    if (!field || r.value == null) continue;
    const parsed = field.safeParse(r.value);
    if (parsed.success) (out as Record<string, unknown>)[r.key] = parsed.data;
  }
  return out;
}

interface Caches {
  security: TtlValue<SecuritySettings>;
  roles: TtlValue<Map<string, string[]>>;
  auditOff: TtlValue<Set<number>>;
}

const byDeps = new WeakMap<AppDeps, Caches>();

function caches(deps: AppDeps): Caches {
  let c = byDeps.get(deps);
  if (!c) {
    const now = () => deps.now();
    c = {
      security: new TtlValue(
        async () => mergeSecuritySettings(await securitySettingsRepository(deps.database).all()),
        now,
        SETTINGS_CACHE_MS,
      ),
      roles: new TtlValue(() => permissionsRepository(deps.database).roleTemplates(), now, SETTINGS_CACHE_MS),
      auditOff: new TtlValue(
        () => auditRepository(deps.database).tenantsWithAuditOff(),
        now,
        SETTINGS_CACHE_MS,
      ),
    };
    byDeps.set(deps, c);
  }
  return c;
}

/** Security settings, at most 60 s old (this instance sees its own writes at once). */
export const securitySettings = (deps: AppDeps) => caches(deps).security.get();
export const invalidateSecuritySettings = (deps: AppDeps) => caches(deps).security.invalidate();
/** Role -> permission templates from `role_permissions`, at most 60 s old. */
export const roleTemplates = (deps: AppDeps) => caches(deps).roles.get();
/** Tenants whose `audit_log_enabled` is off, at most 60 s old (this instance sees its own writes at once). */
export const tenantsWithAuditOff = (deps: AppDeps) => caches(deps).auditOff.get();
export const invalidateTenantAuditSettings = (deps: AppDeps) => caches(deps).auditOff.invalidate();
