import { orientPair, type ScreenResult } from '@vault-yield/domain';
import type { PoolClient } from '../pool/index.js';

export type ApplyOutcome = 'applied' | 'older' | 'duplicate';

/** Total order of screen runs: time first, then id, so any delivery order picks the same winner. */
function newer(a: { at: number; id: string }, b: { at: number; id: string }): number {
  return a.at !== b.at ? a.at - b.at : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Replaces the universe and the strategies' pairs with `screen` if it is newer than the screen in
 * place; an older or duplicate screen changes nothing. Runs inside the caller's transaction (the
 * one that also stores the topic offset), so readers see the old screen or the new one, never half
 * of it; a failure rolls back to the savepoint and leaves the transaction usable.
 */
export async function applyScreen(
  client: PoolClient,
  screen: ScreenResult,
  now = Date.now(),
): Promise<ApplyOutcome> {
  await client.query('savepoint market_apply');
  try {
    // Serialise writers; the row lock below would not cover the first screen ever.
    await client.query(`select pg_advisory_xact_lock(hashtext('vault-yield-screen'))`);
    const { rows } = await client.query<{ version: string; screened_at: number }>(
      'select version, screened_at from screen_meta where id',
    );
    const current = rows[0];
    if (current) {
      const order = newer(
        { at: screen.screenedAt, id: screen.screenId },
        { at: current.screened_at, id: current.version },
      );
      if (order <= 0) {
        await client.query('release savepoint market_apply');
        return order === 0 ? 'duplicate' : 'older';
      }
    }
    const bySymbol = new Map(screen.assets.map((a) => [a.symbol, a]));
    await client.query('delete from universe_assets');
    await client.query('delete from universe_pairs');
    if (screen.assets.length > 0) {
      await client.query(
        `insert into universe_assets (chain_id, address, symbol, category, decimals, venues, liquidity_usd, rank, screen_version)
         select chain_id, address, symbol, category, decimals, array(select jsonb_array_elements_text(venues)), liquidity_usd, rank, $1
         from jsonb_to_recordset($2::jsonb) as x(chain_id int, address text, symbol text, category text, decimals int, venues jsonb, liquidity_usd float8, rank int)`,
        [
          screen.screenId,
          JSON.stringify(
            screen.assets.map((a, rank) => ({
              chain_id: a.chainId,
              address: a.address,
              symbol: a.symbol,
              category: a.category,
              decimals: a.decimals,
              venues: a.venues,
              liquidity_usd: a.liquidityUsd,
              rank,
            })),
          ),
        ],
      );
    }
    // The schema guarantees every symbol of a pair is among the assets.
    const addressOf = (symbol: string) => bySymbol.get(symbol)!.address;
    // One orientation everywhere (orientPair): the universe's pairs and the strategies' alike.
    const strategyPairs = Object.fromEntries(
      Object.entries(screen.strategies).map(([id, aimed]) => [
        id,
        aimed.map((p) => orientPair(p, addressOf)),
      ]),
    );
    if (screen.pairs.length > 0) {
      const pairs = screen.pairs.map((named, rank) => {
        const p = orientPair(named, addressOf);
        const [x, y] = [bySymbol.get(p.a)!, bySymbol.get(p.b)!];
        return {
          chain_id: x.chainId,
          token_a: x.address,
          token_b: y.address,
          a: x.symbol,
          b: y.symbol,
          venues: p.venues,
          tvl_usd: p.tvlUsd,
          emissions: p.emissions,
          rank,
        };
      });
      await client.query(
        `insert into universe_pairs (chain_id, token_a, token_b, a, b, venues, tvl_usd, emissions, rank, screen_version)
         select chain_id, token_a, token_b, a, b, array(select jsonb_array_elements_text(venues)), tvl_usd, emissions, rank, $1
         from jsonb_to_recordset($2::jsonb) as x(chain_id int, token_a text, token_b text, a text, b text, venues jsonb, tvl_usd float8, emissions boolean, rank int)`,
        [screen.screenId, JSON.stringify(pairs)],
      );
    }
    await client.query(
      `insert into screen_meta (id, version, screened_at, updated_at, strategy_pairs) values (true, $1, $2, $3, $4)
       on conflict (id) do update set version = excluded.version, screened_at = excluded.screened_at,
         updated_at = excluded.updated_at, strategy_pairs = excluded.strategy_pairs`,
      [screen.screenId, screen.screenedAt, now, JSON.stringify(strategyPairs)],
    );
    await client.query(
      `update strategies set pairs = coalesce($1::jsonb -> id, '[]'::jsonb), screen_version = $2, updated_at = $3`,
      [JSON.stringify(strategyPairs), screen.screenId, now],
    );
    await client.query('release savepoint market_apply');
    return 'applied';
  } catch (err) {
    await client.query('rollback to savepoint market_apply').catch(() => {});
    throw err;
  }
}
