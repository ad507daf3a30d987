// The per-model price table of the cost estimates (spec document 2, "Return on investment"; rule 4:
// planning estimates, not invoices). Pure. Prices are US dollars per million tokens, input and output
// separately. Three layers, one function decides (`effectivePrices`): an administrator's overrides
// (stored in the database, PUT/DELETE /api/roi/prices) over the `pricing` settings section
// (config/settings.ts) over the built-in table below. A model is priced by the longest table key that
// is a prefix of its lower-cased name (`claude-sonnet-4-5-20250929` -> `claude-sonnet-4`); a model no
// key matches (or a message without a model) is priced at the default price and reported as such.
//
// Where the built-in figures come from (list prices, standard tier, prompts under any long-context
// surcharge, no batch or cache discounts), as of PRICES_AS_OF, re-checked on 2026-11-23 with the
// project's reference search (stored copies of public pages, no live web access; most are tables of
// third parties that cite the provider's page, so "matched" is not "read on the provider's page"):
//   Anthropic  every row matched a table transcribed from platform.claude.com/docs "Model pricing"
//              (Opus 4.5 $5/$25; Opus 4/4.1 and Opus 3 $15/$75; Sonnet 3.5-4.5 $3/$15; Haiku 4.5
//              $1/$5; Haiku 3.5 $0.80/$4; Haiku 3 $0.25/$1.25).
//   OpenAI     matched: gpt-5 $1.25/$10, gpt-5-mini $0.25/$2, gpt-4.1 $2/$8 (GitHub's Copilot per-token
//              table, github/docs models-and-pricing.yml); gpt-4o $2.50/$10, gpt-4o-mini $0.15/$0.60,
//              o1 $15/$60 (a table citing openai.com/api/pricing); o3-mini $1.10/$4.40 (OpenAI's
//              announcement as quoted in an issue). NOT verified, kept as they were: gpt-5-nano,
//              gpt-4.1-mini, gpt-4.1-nano, o3 (after its 2025 price cut), o4-mini.
//   Google     matched: gemini-2.5-pro $1.25/$10 for prompts <= 200k tokens (a table citing
//              ai.google.dev/gemini-api/docs/pricing); gemini-2.5-flash $0.30/$2.50,
//              gemini-2.5-flash-lite $0.10/$0.40 and gemini-2.0-flash $0.10/$0.40 only in third-party
//              lists. The > 200k-token surcharge of 2.5 Pro is not modelled.
//   DeepSeek   CORRECTED from $0.27/$1.10 (chat) and $0.55/$2.19 (reasoner), the early-2025 prices, to
//              the DeepSeek-V3.2 prices in force since 2025-09-29: $0.28 input (cache miss) and $0.42
//              output for both, from a provider table that cites DeepSeek's docs; NOT verified on
//              api-docs.deepseek.com itself (the stored copy there is the earlier table).
// Anything else an organisation pays (negotiated rates, other providers) is an admin override.

export interface Price {
  /** USD per million input tokens. */
  input: number;
  /** USD per million output tokens. */
  output: number;
}
export type PriceTable = Readonly<Record<string, Price>>;

export interface PricingSettings {
  models: Record<string, Price>;
  default_input_per_million: number;
  default_output_per_million: number;
}

/** The currency of the price table (list prices are published in US dollars). */
export const PRICE_CURRENCY = 'USD';
export const PRICES_AS_OF = '2025-11-01';

export const DEFAULT_MODEL_PRICES: PriceTable = {
  // Anthropic
  'claude-opus-4-5': { input: 5, output: 25 },
  'claude-opus-4': { input: 15, output: 75 },
  'claude-3-opus': { input: 15, output: 75 },
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-3-7-sonnet': { input: 3, output: 15 },
  'claude-3-5-sonnet': { input: 3, output: 15 },
  'claude-haiku-4-5': { input: 1, output: 5 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
  'claude-3-haiku': { input: 0.25, output: 1.25 },
  // OpenAI
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-5-mini': { input: 0.25, output: 2 },
  'gpt-5-nano': { input: 0.05, output: 0.4 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  o1: { input: 15, output: 60 },
  o3: { input: 2, output: 8 },
  'o3-mini': { input: 1.1, output: 4.4 },
  'o4-mini': { input: 1.1, output: 4.4 },
  // Google
  'gemini-2.5-pro': { input: 1.25, output: 10 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4 },
  'gemini-2.0-flash': { input: 0.1, output: 0.4 },
  // DeepSeek
  'deepseek-chat': { input: 0.28, output: 0.42 },
  'deepseek-reasoner': { input: 0.28, output: 0.42 },
};

/** Default price of a model the table does not know: a mid-tier model's list price. */
export const DEFAULT_PRICE: Price = { input: 3, output: 15 };

/** Output price (USD per million) from which a model counts as a premium, expensive model. */
export const PREMIUM_OUTPUT_PRICE = 25;

export interface Pricing {
  table: PriceTable;
  fallback: Price;
}

/** Where a price of the effective table comes from (precedence admin > config > builtin). */
export type PriceSource = 'builtin' | 'config' | 'admin';

/** An administrator's overrides as stored (model keys are already valid lower-case prefixes). */
export interface AdminPrices {
  models: Record<string, Price>;
  default_input_per_million?: number;
  default_output_per_million?: number;
}

export interface PriceRow extends Price {
  model: string;
  source: PriceSource;
}

export interface EffectivePrices {
  pricing: Pricing;
  /** Every key of the effective table with its source, ordered by key. */
  rows: PriceRow[];
  default_price: Price & { input_source: PriceSource; output_source: PriceSource };
}

/**
 * The one decision on prices: each key and each default price takes the administrator's value, else
 * the settings' (`pricing` section; keys lower-cased), else the built-in one. A settings default equal
 * to the built-in default counts as built-in (the settings schema defaults to the same figures).
 */
export function effectivePrices(config?: Partial<PricingSettings>, admin?: AdminPrices): EffectivePrices {
  const layers = new Map<string, PriceRow>();
  const layer = (prices: Record<string, Price> | undefined, from: PriceSource) => {
    for (const [k, v] of Object.entries(prices ?? {})) {
      const model = k.toLowerCase();
      layers.set(model, { model, input: v.input, output: v.output, source: from });
    }
  };
  layer(DEFAULT_MODEL_PRICES, 'builtin');
  layer(config?.models, 'config');
  layer(admin?.models, 'admin');
  const pick = (a: number | undefined, c: number | undefined, builtin: number): [number, PriceSource] =>
    a !== undefined ? [a, 'admin'] : c !== undefined && c !== builtin ? [c, 'config'] : [builtin, 'builtin'];
  const [input, input_source] = pick(
    admin?.default_input_per_million,
    config?.default_input_per_million,
    DEFAULT_PRICE.input,
  );
  const [output, output_source] = pick(
    admin?.default_output_per_million,
    config?.default_output_per_million,
    DEFAULT_PRICE.output,
  );
  const rows = [...layers.values()].sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
  return {
    pricing: {
      table: Object.fromEntries(rows.map((r) => [r.model, { input: r.input, output: r.output }])),
      fallback: { input, output },
    },
    rows,
    default_price: { input, output, input_source, output_source },
  };
}

/** The effective pricing without administrator overrides (the built-in table under the settings). */
export function pricingFrom(settings?: Partial<PricingSettings>): Pricing {
  return effectivePrices(settings).pricing;
}

export interface PricedModel extends Price {
  /** The table key that priced the model, or null when the default price applied. */
  matched: string | null;
  priced_by: 'model' | 'default';
}

/** The price of `model`: the longest matching key, else the default price. */
export function priceFor(pricing: Pricing, model: string | null | undefined): PricedModel {
  const name = (model ?? '').trim().toLowerCase();
  let best: string | null = null;
  if (name)
    for (const key of Object.keys(pricing.table))
      if (name.startsWith(key) && (best === null || key.length > best.length)) best = key;
  if (best === null) return { ...pricing.fallback, matched: null, priced_by: 'default' };
  return { ...pricing.table[best]!, matched: best, priced_by: 'model' };
}

/** USD cost of a token count at a price, unrounded. */
export const costOf = (price: Price, inputTokens: number, outputTokens: number): number =>
  (inputTokens * price.input + outputTokens * price.output) / 1_000_000;

/** Money rounded to 4 decimals (token costs are often fractions of a cent). */
export const money = (v: number): number => Math.round(v * 10_000) / 10_000;
