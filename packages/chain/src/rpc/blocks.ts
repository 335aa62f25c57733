import type { Hash } from 'viem';
import type { ChainClient } from '../client/index.js';

/** The header fields the indexer keeps: enough for timestamps and parent-hash reorg checks. */
export interface BlockHeader {
  number: number;
  hash: Hash;
  parentHash: Hash;
  /** Unix seconds. */
  timestamp: number;
}

interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
}

const hex = (n: number) => `0x${n.toString(16)}` as const;

/** The node's head, uncached (eth_blockNumber straight to the node). */
export async function getHeadNumber(client: ChainClient): Promise<number> {
  const h = await client.request({ method: 'eth_blockNumber' });
  return Number(BigInt(h));
}

/** Headers of the given blocks (null where the node has no such block, e.g. past its head). */
export async function getHeaders(
  client: ChainClient,
  numbers: readonly number[],
): Promise<(BlockHeader | null)[]> {
  return Promise.all(
    numbers.map(async (n) => {
      const b = (await client.request({
        method: 'eth_getBlockByNumber',
        params: [hex(n), false],
      })) as unknown as RpcBlock | null;
      if (!b) return null;
      return {
        number: Number(BigInt(b.number)),
        hash: b.hash.toLowerCase() as Hash,
        parentHash: b.parentHash.toLowerCase() as Hash,
        timestamp: Number(BigInt(b.timestamp)),
      };
    }),
  );
}

export async function getChainIdFromNode(client: ChainClient): Promise<number> {
  const id = await client.request({ method: 'eth_chainId' });
  return Number(BigInt(id));
}
