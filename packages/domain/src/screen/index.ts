import { z } from 'zod';
import { address } from '../records/primitives.js';

/**
 * Market-wide inputs that are not per vault, each on its own topic: the screen's output (what
 * passed the ranking model; the model itself is outside this service) and the strategy catalogue.
 */

export const SCREEN_SCHEMA_VERSION = 1 as const;

export const assetCategory = z.enum(['major', 'stable', 'stock token', 'meme']);
export type AssetCategory = z.infer<typeof assetCategory>;

const symbol = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[A-Za-z0-9._-]+$/, 'expected a token symbol (letters, digits, . _ -)');
const venue = z.string().min(1).max(64);
const usd = z.number().finite().nonnegative();
const strategyId = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'expected a strategy id (lowercase letters, digits, dashes)');

export const screenAsset = z.object({
  symbol,
  category: assetCategory,
  venues: z.array(venue).min(1),
  liquidityUsd: usd.describe('liquidity depth in USD across the venues'),
  chainId: z.number().int().positive(),
  address,
  decimals: z.number().int().min(0).max(36),
});

export const screenPair = z
  .object({
    a: symbol,
    b: symbol,
    venues: z.array(venue).min(1),
    tvlUsd: usd,
    emissions: z.boolean().describe('whether the pool pays emissions (rewards)'),
  })
  .refine((p) => p.a !== p.b, 'a pair needs two different assets');

/** One screen run: versioned, timestamped; the newest `screenedAt` wins. */
export const screenResult = z
  .object({
    schemaVersion: z.literal(SCREEN_SCHEMA_VERSION),
    /** Identifier of this run (unique per run; a re-delivery carries the same id). */
    screenId: z.string().min(1).max(100),
    /** When the screen ran, Unix milliseconds. */
    screenedAt: z.number().int().positive(),
    assets: z.array(screenAsset).max(10_000),
    pairs: z.array(screenPair).max(10_000),
    /** Per strategy id, the pairs that strategy would aim at now (each must be in `pairs`). */
    strategies: z.record(
      strategyId,
      z.array(z.object({ a: symbol, b: symbol, venues: z.array(venue).min(1) })),
    ),
  })
  .superRefine((s, ctx) => {
    const assets = new Set(s.assets.map((a) => a.symbol));
    if (assets.size !== s.assets.length)
      ctx.addIssue({ code: 'custom', path: ['assets'], message: 'duplicate asset symbol' });
    // A pair is one pair in either orientation (it is served in one: see orientPair).
    const pairs = new Map<string, string>();
    s.pairs.forEach((p, i) => {
      for (const side of ['a', 'b'] as const) {
        if (!assets.has(p[side]))
          ctx.addIssue({
            code: 'custom',
            path: ['pairs', i, side],
            message: `asset ${p[side]} is not in assets`,
          });
      }
      const key = pairKey(p);
      const named = pairs.get(key);
      if (named !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['pairs', i],
          message:
            named === `${p.a}/${p.b}`
              ? `duplicate pair ${named}`
              : `pair ${p.a}/${p.b} is ${named} the other way round: name a pair once`,
        });
      else pairs.set(key, `${p.a}/${p.b}`);
    });
    for (const [id, aimed] of Object.entries(s.strategies)) {
      aimed.forEach((p, i) => {
        if (!pairs.has(pairKey(p)))
          ctx.addIssue({
            code: 'custom',
            path: ['strategies', id, i],
            message: `pair ${p.a}/${p.b} is not in pairs`,
          });
      });
    }
  });
export type ScreenResult = z.output<typeof screenResult>;

/** A pair's identity whatever its orientation. */
const pairKey = (p: { a: string; b: string }) => (p.a < p.b ? `${p.a}\u0000${p.b}` : `${p.b}\u0000${p.a}`);

/**
 * A pair in the one orientation every route serves: the pool's own, token0/token1 — `a` the asset
 * of the lower address — as a position's pool and range are shown (the range is the price of
 * token0 in token1). A screen may name a pair either way round (once); `/v1/universe/pairs` and
 * `/v1/strategies[].pairs` both show it so.
 */
export function orientPair<P extends { a: string; b: string }>(
  p: P,
  addressOf: (symbol: string) => string,
): P {
  return addressOf(p.a).toLowerCase() <= addressOf(p.b).toLowerCase() ? p : { ...p, a: p.b, b: p.a };
}

/** The strategy catalogue: identity and display copy. Pairs and figures come from elsewhere. */
export const strategyCatalogue = z
  .object({
    schemaVersion: z.literal(SCREEN_SCHEMA_VERSION),
    /** When the catalogue was published, Unix milliseconds; the newest wins. */
    publishedAt: z.number().int().positive(),
    strategies: z
      .array(
        z.object({
          id: strategyId,
          name: z.string().min(1).max(100),
          description: z.string().min(1).max(2000),
          riskNote: z.string().min(1).max(2000),
        }),
      )
      .min(1)
      .max(1000),
  })
  .superRefine((c, ctx) => {
    const ids = new Set<string>();
    c.strategies.forEach((s, i) => {
      if (ids.has(s.id))
        ctx.addIssue({ code: 'custom', path: ['strategies', i, 'id'], message: `duplicate id ${s.id}` });
      ids.add(s.id);
    });
  });
export type StrategyCatalogue = z.output<typeof strategyCatalogue>;
