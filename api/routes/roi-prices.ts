// The model price table of the cost estimates (spec document 2, "Return on investment"; issue 11 item 5):
//   GET    /api/roi/prices            any authenticated user: the effective table, each row with its
//                                     source (`builtin` | `config` | `admin`), currency and as-of date
//   PUT    /api/roi/prices            system administrator: upsert overrides {models: {<prefix>: {input,
//                                     output}}, default_input_per_million?, default_output_per_million?}
//   DELETE /api/roi/prices/<prefix>   system administrator: remove one prefix's override (404 if none)
// Rules and limits: domain/roi/admin-prices.ts; precedence (admin > config > builtin):
// domain/roi/prices.ts `effectivePrices`, the one place that decides it.
//
// The table is global, like the `pricing` settings section it overrides: the same list prices price
// every tenant's usage. A tenant administrator therefore cannot change it (403): a write would change
// every other tenant's figures. Every write is audited with the prefixes and prices changed.
//
// Storage and freshness: the overrides are one security_settings row (`roi_model_prices`, JSON). Every
// ROI and optimization figure reads the effective table through `currentPrices`, a per-process cache
// of PRICES_CACHE_MS (5 s): a write refreshes the writing instance at once, other instances within 5 s.

import { Router } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ROI_PRICES_KEY, roiPricesRepository } from '../../db/repositories/roi.ts';
import { BadRequestError, NotFoundError } from '../../domain/errors.ts';
import {
  applyDelete,
  applyPut,
  MAX_ADMIN_PRICES,
  parseStoredPrices,
  prefixSchema,
  putPricesBody,
  TooManyPricesError,
} from '../../domain/roi/admin-prices.ts';
import { ROI_NOTE } from '../../domain/roi/figures.ts';
import {
  type AdminPrices,
  type EffectivePrices,
  effectivePrices,
  PRICE_CURRENCY,
  PRICES_AS_OF,
} from '../../domain/roi/prices.ts';
import { writeAudit } from '../../services/audit.ts';
import type { AppDeps } from '../../services/deps.ts';
import { authenticate, requireSystemAdmin } from '../middleware/auth.ts';
import { endpoint } from '../openapi/endpoint.ts';

export const PRICES_CACHE_MS = 5_000;

interface Cached {
  at: number;
  value: EffectivePrices & { admin: AdminPrices | undefined };
}
const cache = new WeakMap<AppDeps, Cached>();

function readStored(json: string | null, logger: Logger): AdminPrices | undefined {
  const admin = parseStoredPrices(json);
  if (json && !admin) logger.warn({ key: ROI_PRICES_KEY }, 'stored ROI price overrides unreadable; ignored');
  return admin;
}

/** The effective price table (admin > config > builtin), at most PRICES_CACHE_MS old. */
export async function currentPrices(deps: AppDeps): Promise<Cached['value']> {
  const now = deps.now().getTime();
  const hit = cache.get(deps);
  if (hit && now - hit.at < PRICES_CACHE_MS && now >= hit.at) return hit.value;
  const admin = readStored(await roiPricesRepository(deps.database).get(), deps.logger);
  const value = { ...effectivePrices(deps.settings.pricing, admin), admin };
  cache.set(deps, { at: now, value });
  return value;
}

/** The answer of GET /api/roi/prices (and of every write). */
export const pricesView = (p: Cached['value']) => ({
  estimate: true as const,
  note: ROI_NOTE,
  cost_currency: PRICE_CURRENCY,
  currency: PRICE_CURRENCY,
  prices_as_of: PRICES_AS_OF,
  unit: 'USD per million tokens',
  precedence: ['admin', 'config', 'builtin'],
  cache_seconds: PRICES_CACHE_MS / 1000,
  default_price: p.default_price,
  admin_overrides: Object.keys(p.admin?.models ?? {}).length,
  max_admin_overrides: MAX_ADMIN_PRICES,
  models: p.rows,
});

const prefixParam = z.object({ prefix: prefixSchema });

// Each route's declaration (validation + /api/openapi.json; api/openapi/endpoint.ts).
const pricesShape = {
  estimate: z.literal(true),
  note: z.string(),
  cost_currency: z.string(),
  currency: z.string(),
  prices_as_of: z.string(),
  unit: z.string(),
  precedence: z.array(z.string()),
  cache_seconds: z.number(),
  default_price: z.looseObject({ input: z.number(), output: z.number() }),
  admin_overrides: z.number().int(),
  max_admin_overrides: z.number().int(),
  models: z.array(
    z.looseObject({ model: z.string(), input: z.number(), output: z.number(), source: z.string() }),
  ),
};
const getRoiPrices = endpoint({ tags: ['roi-prices'], responses: { 200: z.looseObject(pricesShape) } });
const putRoiPrices = endpoint({
  tags: ['roi-prices'],
  body: putPricesBody,
  responses: { 200: z.looseObject({ success: z.literal(true), ...pricesShape }) },
});
const deleteRoiPrices = endpoint({
  tags: ['roi-prices'],
  params: prefixParam,
  responses: { 200: z.looseObject({ success: z.literal(true), removed: z.string(), ...pricesShape }) },
});

export function roiPricesRouter(deps: AppDeps): Router {
  const r = Router();
  const repo = roiPricesRepository(deps.database);
  const refresh = async () => {
    cache.delete(deps);
    return pricesView(await currentPrices(deps));
  };

  r.get('/api/roi/prices', getRoiPrices, authenticate(deps), async (_req, res) => {
    res.json(pricesView(await currentPrices(deps)));
  });

  r.put('/api/roi/prices', putRoiPrices, authenticate(deps), requireSystemAdmin, async (req, res) => {
    const body = putRoiPrices.body(req);
    try {
      await repo.update((json) => JSON.stringify(applyPut(readStored(json, deps.logger), body)), deps.now());
    } catch (err) {
      if (err instanceof TooManyPricesError)
        throw new BadRequestError(
          `models: at most ${MAX_ADMIN_PRICES} overrides may be stored; delete some first`,
        );
      throw err;
    }
    await writeAudit(deps, req, {
      action: 'ROI_PRICES_UPDATE',
      resourceType: 'roi_prices',
      severity: 'warning',
      details: {
        models: body.models,
        ...(body.default_input_per_million !== undefined && {
          default_input_per_million: body.default_input_per_million,
        }),
        ...(body.default_output_per_million !== undefined && {
          default_output_per_million: body.default_output_per_million,
        }),
      },
    });
    res.json({ success: true, ...(await refresh()) });
  });

  r.delete(
    '/api/roi/prices/:prefix',
    deleteRoiPrices,
    authenticate(deps),
    requireSystemAdmin,
    async (req, res) => {
      const { prefix } = deleteRoiPrices.params(req);
      let removed: AdminPrices['models'][string] | undefined;
      const changed = await repo.update((json) => {
        const current = readStored(json, deps.logger);
        const next = applyDelete(current, prefix);
        if (!next) return undefined;
        removed = current?.models[prefix];
        return JSON.stringify(next);
      }, deps.now());
      if (!changed) throw new NotFoundError(`No admin price override for ${prefix}`);
      await writeAudit(deps, req, {
        action: 'ROI_PRICE_DELETE',
        resourceType: 'roi_prices',
        resourceId: prefix,
        severity: 'warning',
        details: { prefix, removed },
      });
      res.json({ success: true, removed: prefix, ...(await refresh()) });
    },
  );

  return r;
}
