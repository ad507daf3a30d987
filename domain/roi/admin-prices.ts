// An administrator's price overrides (PUT /api/roi/prices, DELETE /api/roi/prices/<prefix>), pure: the
// input schema, the stored JSON, and how a change applies. Overrides sit over the `pricing` settings and
// the built-in table (prices.ts `effectivePrices`). A PUT upserts the prefixes it names and the default
// prices it gives (null clears an overridden default); DELETE removes one prefix's override.
//
// Limits: a prefix is 1-100 characters of [a-z0-9._:-] (model names are matched lower-cased); a price is
// a finite number >= 0 (USD per million tokens); at most MAX_ADMIN_PRICES prefixes, in one request and
// stored in total. Every 400 names the field.
import { z } from 'zod';
import type { AdminPrices, Price } from './prices.ts';

export const MAX_ADMIN_PRICES = 500;
/** Linear-time check (one character class, bounded length). */
export const PRICE_PREFIX = /^[a-z0-9._:-]{1,100}$/;
export const PRICE_PREFIX_RULE = 'must be 1-100 characters of a-z, 0-9, ".", "_", ":" or "-"';

const amount = z.number().nonnegative().finite();
const priceSchema = z.object({ input: amount, output: amount }).strict();

/** `__proto__` matches the pattern but is no model name, and would set an object's prototype. */
export const prefixSchema = z
  .string()
  .regex(PRICE_PREFIX, PRICE_PREFIX_RULE)
  .refine((k) => k !== '__proto__', 'is not a model name');

/** A record keyed by prefixes whose bad key is named with the rule it breaks (zod says only "Invalid key"). */
const pricesByPrefix = () =>
  z.record(prefixSchema, priceSchema, {
    error: (iss) =>
      iss.code === 'invalid_key'
        ? `model prefix ${(iss.issues as { message: string }[] | undefined)?.[0]?.message ?? PRICE_PREFIX_RULE}`
        : undefined,
  });

export const putPricesBody = z
  .object({
    models: pricesByPrefix()
      .refine((m) => Object.keys(m).length <= MAX_ADMIN_PRICES, `at most ${MAX_ADMIN_PRICES} entries`)
      .default({}),
    default_input_per_million: amount.nullable().optional(),
    default_output_per_million: amount.nullable().optional(),
  })
  .strict()
  .refine(
    (b) =>
      Object.keys(b.models).length > 0 ||
      b.default_input_per_million !== undefined ||
      b.default_output_per_million !== undefined,
    'Nothing to update: give models or a default price',
  );
export type PutPricesBody = z.infer<typeof putPricesBody>;

/** The stored overrides; anything unreadable in storage counts as no override (and is logged by the caller). */
export function parseStoredPrices(json: string | null | undefined): AdminPrices | undefined {
  if (!json) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return undefined;
  }
  const stored = z
    .object({
      models: pricesByPrefix().default({}),
      default_input_per_million: amount.optional(),
      default_output_per_million: amount.optional(),
    })
    .safeParse(raw);
  return stored.success ? stored.data : undefined;
}

export class TooManyPricesError extends Error {}

/** The overrides after a PUT; throws TooManyPricesError past MAX_ADMIN_PRICES stored prefixes. */
export function applyPut(current: AdminPrices | undefined, body: PutPricesBody): AdminPrices {
  const models: Record<string, Price> = Object.fromEntries([
    ...Object.entries(current?.models ?? {}),
    ...Object.entries(body.models).map(([k, v]) => [k, { input: v.input, output: v.output }] as const),
  ]);
  if (Object.keys(models).length > MAX_ADMIN_PRICES) throw new TooManyPricesError();
  const next: AdminPrices = { models };
  const dflt = (given: number | null | undefined, had: number | undefined) =>
    given === null ? undefined : (given ?? had);
  const di = dflt(body.default_input_per_million, current?.default_input_per_million);
  const dout = dflt(body.default_output_per_million, current?.default_output_per_million);
  if (di !== undefined) next.default_input_per_million = di;
  if (dout !== undefined) next.default_output_per_million = dout;
  return next;
}

/** The overrides without `prefix`, or undefined when it had no override. */
export function applyDelete(current: AdminPrices | undefined, prefix: string): AdminPrices | undefined {
  if (!current || !Object.hasOwn(current.models, prefix)) return undefined;
  const { [prefix]: _removed, ...models } = current.models;
  return { ...current, models };
}
