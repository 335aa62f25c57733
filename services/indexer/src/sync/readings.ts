import { type ChainClient, readTokenFeed, type ValuationReader } from '@vault-yield/chain';
import { type PriceReading, PriceWatch, type ValuedSet } from '../price-watch.js';

type Address = `0x${string}`;

/**
 * The valuation watch's inputs read from the chain: a token's info and feed, a pool's state, at
 * a block. Used at start-up (the checkpoint's block), when discovery meets a new token or pool or
 * a FeedSet, and at a reorg's common ancestor. `lenient` reads return null instead of throwing
 * (a vault born after the ancestor may use contracts that did not exist there).
 */
export interface PriceReads {
  token(token: Address, block: number, lenient?: boolean): Promise<PriceReading | null>;
  pool(pool: Address, block: number, lenient?: boolean): Promise<PriceReading | null>;
  /** A watch holding these vaults' tokens and pools as they were after `block`. */
  watchAt(block: number, vaults: readonly ValuedSet[], lenient?: boolean): Promise<PriceWatch>;
}

export function createPriceReads(deps: {
  client: ChainClient;
  reader: ValuationReader;
  factory: Address;
  /** Runs a read with the engine's retries. */
  rpc: <T>(fn: () => Promise<T>) => Promise<T>;
}): PriceReads {
  const { client, reader, factory, rpc } = deps;
  const tolerant = async (
    read: () => Promise<PriceReading>,
    lenient: boolean,
  ): Promise<PriceReading | null> => {
    try {
      return await read();
    } catch (err) {
      if (lenient) return null;
      throw err;
    }
  };
  const token: PriceReads['token'] = (t, block, lenient = false) =>
    tolerant(async () => {
      const [info, feed] = await rpc(() =>
        Promise.all([reader.tokenInfo(t), readTokenFeed(client, factory, t, block)]),
      );
      return { kind: 'token', block, info, feed };
    }, lenient);
  const pool: PriceReads['pool'] = (p, block, lenient = false) =>
    tolerant(
      async () => ({ kind: 'pool', block, pool: await rpc(() => reader.poolContext(p, block)) }),
      lenient,
    );
  return {
    token,
    pool,
    async watchAt(block, vaults, lenient = false) {
      const t = new PriceWatch();
      if (block < 0) return t;
      const tokens = new Set<Address>();
      const pools = new Set<Address>();
      for (const v of vaults) {
        tokens.add(v.token0);
        tokens.add(v.token1);
        tokens.add(v.rewardToken);
        pools.add(v.pool);
      }
      const snaps = await Promise.all([
        ...[...tokens].map((x) => token(x, block, lenient)),
        ...[...pools].map((x) => pool(x, block, lenient)),
      ]);
      for (const s of snaps) if (s) t.applyReading(s);
      return t;
    },
  };
}
