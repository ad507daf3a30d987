// The per-model price table of the cost estimates (spec document 2, "Return on investment"; rule 4:
// planning estimates, not invoices). Pure. Prices are US dollars per million tokens, input and output
// separately. The built-in table is the providers' public list prices as of 2025-11-01 for common
// model families (Anthropic, OpenAI, Google, DeepSeek); the `pricing` settings section
// (config/settings.ts) overrides or extends it. A model is priced by the longest table key that is a
// prefix of its lower-cased name (`claude-sonnet-4-5-20250929` -> `claude-sonnet-4`); a model no key
// matches (or a message without a model) is priced at the default price and reported as such.

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
  'deepseek-chat': { input: 0.27, output: 1.1 },
  'deepseek-reasoner': { input: 0.55, output: 2.19 },
};

/** Default price of a model the table does not know: a mid-tier model's list price. */
export const DEFAULT_PRICE: Price = { input: 3, output: 15 };

/** Output price (USD per million) from which a model counts as a premium, expensive model. */
export const PREMIUM_OUTPUT_PRICE = 25;

export interface Pricing {
  table: PriceTable;
  fallback: Price;
}

/** The effective pricing: the built-in table with the settings' entries over it (keys lower-cased). */
export function pricingFrom(settings?: Partial<PricingSettings>): Pricing {
  const table: Record<string, Price> = { ...DEFAULT_MODEL_PRICES };
  for (const [k, v] of Object.entries(settings?.models ?? {})) table[k.toLowerCase()] = v;
  return {
    table,
    fallback: {
      input: settings?.default_input_per_million ?? DEFAULT_PRICE.input,
      output: settings?.default_output_per_million ?? DEFAULT_PRICE.output,
    },
  };
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
