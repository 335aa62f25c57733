import { vaultFactoryAbi } from '@vault-yield/contracts';
import type { Address } from 'viem';
import type { ChainClient } from './client/index.js';

export interface FactoryInfo {
  address: Address;
  /** The block the factory was deployed in: where a backfill starts. */
  deploymentBlock: bigint;
  vaultCount: bigint;
}

/** Reads the factory's start block (and current vault count) for the indexer's backfill. */
export async function readFactoryInfo(client: ChainClient, factory: Address): Promise<FactoryInfo> {
  const [deploymentBlock, vaultCount] = await Promise.all([
    client.readContract({ address: factory, abi: vaultFactoryAbi, functionName: 'deploymentBlock' }),
    client.readContract({ address: factory, abi: vaultFactoryAbi, functionName: 'vaultCount' }),
  ]);
  return { address: factory.toLowerCase() as Address, deploymentBlock, vaultCount };
}
