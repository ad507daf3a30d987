// Security settings: GET/PUT /api/security-settings (document 2, "Governance and content"). The
// settings are global (login lockout, password policy), so only system administrators read or change
// them. Readers elsewhere go through the 60-second cache; a write here refreshes this instance at once.
import { Router } from 'express';
import { z } from 'zod';
import { securitySettingsRepository } from '../../db/repositories/security-settings.ts';
import { BadRequestError } from '../../domain/errors.ts';
import { DEFAULT_SECURITY_SETTINGS, securitySettingsSchema } from '../../domain/security-settings.ts';
import {
  invalidateSecuritySettings,
  SETTINGS_CACHE_MS,
  securitySettings,
} from '../../services/access-caches.ts';
import { writeAudit } from '../../services/audit.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate, requireSystemAdmin } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';

const putBody = securitySettingsSchema.partial().strict();
const DESCRIPTIONS = Object.fromEntries(DEFAULT_SECURITY_SETTINGS.map((s) => [s.key, s.description]));

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const settingsShape = {
  settings: z.looseObject({
    login_max_attempts: z.number().int(),
    login_lockout_minutes: z.number().int(),
    password_min_length: z.number().int(),
    sso_link_existing_by_email: z.boolean(),
  }),
  descriptions: z.record(z.string(), z.string()),
  cache_seconds: z.number(),
};
const getSettings = endpoint({
  tags: ['security-settings'],
  responses: { 200: z.looseObject(settingsShape) },
});
const putSettings = endpoint({
  tags: ['security-settings'],
  body: putBody,
  responses: { 200: z.looseObject({ success: z.literal(true), ...settingsShape }) },
});

export function securitySettingsRouter(deps: AppDeps): Router {
  const r = Router();
  r.use(authenticate(deps), requireSystemAdmin);

  const view = async () => ({
    settings: await securitySettings(deps),
    descriptions: DESCRIPTIONS,
    cache_seconds: SETTINGS_CACHE_MS / 1000,
  });

  r.get('/', getSettings, async (_req, res) => {
    res.json(await view());
  });

  r.put('/', putSettings, async (req, res) => {
    const body = putSettings.body(req);
    const entries = Object.entries(body).filter(([, v]) => v !== undefined);
    if (!entries.length) throw new BadRequestError('Nothing to update');
    const before = await securitySettings(deps);
    const repo = securitySettingsRepository(deps.database);
    const now = deps.now();
    for (const [key, value] of entries) await repo.put(key, String(value), DESCRIPTIONS[key] ?? '', now);
    invalidateSecuritySettings(deps);
    await writeAudit(deps, req, {
      action: 'SECURITY_SETTINGS_UPDATE',
      resourceType: 'security_settings',
      severity: 'warning',
      details: Object.fromEntries(
        entries.map(([k, v]) => [k, { from: (before as Record<string, unknown>)[k], to: v }]),
      ),
    });
    res.json({ success: true, ...(await view()) });
  });

  return r;
}
