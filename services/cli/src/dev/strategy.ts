import type { ScreenResult, StrategyCatalogue } from '@vault-yield/domain';

interface StackTokens {
  chainId: number;
  tokens: Record<'weth' | 'usdc' | 'arb' | 'rwd', { address: string; symbol: string; decimals: number }>;
}

/** The demo's strategy catalogue: the strategies the demo vaults run. */
export function demoCatalogue(now: number): StrategyCatalogue {
  const entry = (id: string, name: string, description: string, riskNote: string) => ({
    id,
    name,
    description,
    riskNote,
  });
  return {
    schemaVersion: 1,
    publishedAt: now,
    strategies: [
      entry(
        'eth-usdc-narrow',
        'ETH/USDC narrow',
        'Tight ranges on the 0.05% pool, rebalanced as ETH moves.',
        'Out of range often: more rebalancing costs and impermanent loss.',
      ),
      entry(
        'eth-usdc-wide',
        'ETH/USDC wide',
        'A wide range on the 0.3% pool, rarely touched.',
        'Lower fee capture per dollar; impermanent loss on strong trends.',
      ),
      entry(
        'usdc-arb-gauge',
        'USDC/ARB gauge',
        'A range on the USDC/ARB 0.3% pool, with gauge rewards on top of trading fees.',
        'Rewards are paid in a volatile token; emissions can stop.',
      ),
      entry(
        'eth-usdc-mid',
        'ETH/USDC mid',
        'A middle-width range on the 0.3% pool.',
        'Balanced between fee capture and rebalancing.',
      ),
    ],
  };
}

/** A screen result listing the demo chain's tokens and pools as eligible. */
export function demoScreen(stack: StackTokens, now: number): ScreenResult {
  const { weth, usdc, arb, rwd } = stack.tokens;
  const asset = (
    t: { address: string; symbol: string; decimals: number },
    category: 'major' | 'stable' | 'meme',
    liquidityUsd: number,
    venues: string[],
  ) => ({
    symbol: t.symbol,
    category,
    venues,
    liquidityUsd,
    chainId: stack.chainId,
    address: t.address as `0x${string}`,
    decimals: t.decimals,
  });
  const ethUsdc = { a: weth.symbol, b: usdc.symbol };
  return {
    schemaVersion: 1,
    screenId: `demo-${now}`,
    screenedAt: now,
    assets: [
      asset(weth, 'major', 42_000_000, ['uniswap-v3', 'aerodrome-slipstream']),
      asset(usdc, 'stable', 55_000_000, ['uniswap-v3', 'aerodrome-slipstream']),
      asset(arb, 'major', 9_000_000, ['uniswap-v3']),
      asset(rwd, 'meme', 1_200_000, ['aerodrome-slipstream']),
    ],
    pairs: [
      { ...ethUsdc, venues: ['uniswap-v3', 'aerodrome-slipstream'], tvlUsd: 38_000_000, emissions: true },
      { a: usdc.symbol, b: arb.symbol, venues: ['uniswap-v3'], tvlUsd: 4_000_000, emissions: true },
      { a: rwd.symbol, b: usdc.symbol, venues: ['aerodrome-slipstream'], tvlUsd: 900_000, emissions: true },
    ],
    strategies: {
      'eth-usdc-narrow': [{ ...ethUsdc, venues: ['uniswap-v3'] }],
      'eth-usdc-wide': [{ ...ethUsdc, venues: ['uniswap-v3'] }],
      'usdc-arb-gauge': [{ a: usdc.symbol, b: arb.symbol, venues: ['uniswap-v3'] }],
      'eth-usdc-mid': [{ ...ethUsdc, venues: ['uniswap-v3', 'aerodrome-slipstream'] }],
    },
  };
}
