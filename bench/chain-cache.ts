import {
  mockAggregatorBytecode,
  rewardsGaugeBytecode,
  swapperBytecode,
  testTokenBytecode,
  vaultFactoryBytecode,
} from '@vault-yield/contracts';
import { concat, keccak256 } from 'viem';

/**
 * Where bench:indexer caches its generated chain in BENCH_CHAIN_CACHE (`<key>.state`, anvil's
 * dump, and `<key>.json`, its description), and where bench:indexer-ceilings finds it. The key
 * names the bytecode the stack deploys (VaultFactory's holds the Vault's): a chain cached before
 * the contracts changed (an event with another field, a new event) is generated again, never
 * replayed to a decoder that no longer reads its logs.
 */
export function benchChainKey(dir: string, vaults: number, eventsPerVault: number): string {
  const contracts = keccak256(
    concat([
      vaultFactoryBytecode,
      testTokenBytecode,
      mockAggregatorBytecode,
      rewardsGaugeBytecode,
      swapperBytecode,
    ]),
  ).slice(2, 10);
  return `${dir}/chain-v3pools-${contracts}-${vaults}x${eventsPerVault}`;
}
