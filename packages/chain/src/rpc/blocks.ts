import type { Hash, Hex } from 'viem';
import type { ChainClient } from '../client/index.js';

/** The header fields the indexer keeps: enough for timestamps and parent-hash reorg checks. */
export interface BlockHeader {
  number: number;
  hash: Hash;
  parentHash: Hash;
  /** Unix seconds. */
  timestamp: number;
  /** The block's 2048-bit log bloom (absent where a header was built without it). */
  logsBloom?: Hex;
}

interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  logsBloom?: string;
}

/**
 * A block the node has not got (yet): worded like geth's "header not found", so it classifies as
 * 'behind' and is retried rather than taken as the chain's answer.
 */
export class BlockNotAvailableError extends Error {
  override name = 'BlockNotAvailableError';
  constructor(readonly blockNumber: number) {
    super(`header not found: block ${blockNumber} (the node answering is behind it)`);
  }
}

const hex = (n: number) => `0x${n.toString(16)}` as const;

/** The node's head, uncached (eth_blockNumber straight to the node). */
export async function getHeadNumber(client: ChainClient): Promise<number> {
  const h = await client.request({ method: 'eth_blockNumber' });
  return Number(BigInt(h));
}

/**
 * Headers of the given blocks (null where the node has no such block, e.g. past its head; with
 * `required`, a missing one throws BlockNotAvailableError instead).
 */
export async function getHeaders(
  client: ChainClient,
  numbers: readonly number[],
  opts: { required?: boolean } = {},
): Promise<(BlockHeader | null)[]> {
  return Promise.all(
    numbers.map(async (n) => {
      const b = (await client.request({
        method: 'eth_getBlockByNumber',
        params: [hex(n), false],
      })) as unknown as RpcBlock | null;
      if (!b) {
        if (opts.required) throw new BlockNotAvailableError(n);
        return null;
      }
      const h: BlockHeader = {
        number: Number(BigInt(b.number)),
        hash: b.hash.toLowerCase() as Hash,
        parentHash: b.parentHash.toLowerCase() as Hash,
        timestamp: Number(BigInt(b.timestamp)),
      };
      if (b.logsBloom) h.logsBloom = b.logsBloom.toLowerCase() as Hex;
      return h;
    }),
  );
}

export async function getChainIdFromNode(client: ChainClient): Promise<number> {
  const id = await client.request({ method: 'eth_chainId' });
  return Number(BigInt(id));
}
