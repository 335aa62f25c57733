import {
  type Chain,
  createPublicClient,
  defineChain,
  type HttpTransport,
  http,
  type PublicClient,
} from 'viem';
import { UNSHARED } from '../rpc/coalesce.js';
import { createHeadGuard, type HeadGuard } from './head-guard.js';

export { createHeadGuard, type HeadGuard } from './head-guard.js';

export interface ChainClientConfig {
  rpcUrl: string;
  /** Known chain id; when omitted the client asks the node (`getChainId`) where viem needs it. */
  chainId?: number;
  /**
   * viem's cache for getBlockNumber & co. (default 4000 ms). Use 0 in tests that mine blocks and
   * expect to see the new head at once.
   */
  cacheTime?: number;
  /** Polling interval for watch* actions (ms). */
  pollingInterval?: number;
  /** Bundle concurrent requests into JSON-RPC batches (default true, up to 100 calls). */
  batch?: boolean | { batchSize?: number; wait?: number };
  /** Per-request timeout (ms, default 30 000) and retries on transport errors (default 3). */
  timeoutMs?: number;
  retryCount?: number;
}

export type ChainClient = PublicClient<HttpTransport, Chain | undefined>;

/** viem's chain definition for a configured chain id (undefined: viem asks the node). */
export function chainOf(config: Pick<ChainClientConfig, 'rpcUrl' | 'chainId'>): Chain | undefined {
  return config.chainId === undefined
    ? undefined
    : defineChain({
        id: config.chainId,
        name: `chain-${config.chainId}`,
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [config.rpcUrl] } },
      });
}

/** A read-only viem client for one chain: the only door to the RPC in the service. */
export function createChainClient(config: ChainClientConfig): ChainClient {
  const chain = chainOf(config);
  const batch = config.batch ?? true;
  return createPublicClient({
    chain,
    cacheTime: config.cacheTime ?? 4000,
    pollingInterval: config.pollingInterval ?? (config.cacheTime === 0 ? 100 : 4000),
    transport: http(config.rpcUrl, {
      batch: batch === false ? false : batch === true ? { batchSize: 100 } : batch,
      timeout: config.timeoutMs ?? 30_000,
      retryCount: config.retryCount ?? 3,
    }),
  });
}

/** NUMBER PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN: creation code whose answer is block.number. */
const CALL_NUMBER_CODE = '0x4360005260206000f3' as const;
const guards = new WeakMap<ChainClient, HeadGuard>();

/** The client's head guard (one per client: its reads share the head they last saw). */
export function headGuardOf(client: ChainClient): HeadGuard {
  let guard = guards.get(client);
  if (!guard) {
    guard = createHeadGuard({
      // A request of its own, sent after the read was answered: viem's getBlockNumber shares one
      // in flight (even with cacheTime 0), and so would coalesceTransport, unless told not to.
      headNumber: async () =>
        BigInt(
          await client.request({ method: 'eth_blockNumber', [UNSHARED]: true } as {
            method: 'eth_blockNumber';
          }),
        ),
      // Creation code run by an eth_call at the head: returns NUMBER (the block the call runs in).
      callNumber: async () => BigInt((await client.call({ data: CALL_NUMBER_CODE })).data ?? '0x0'),
    });
    guards.set(client, guard);
  }
  return guard;
}
