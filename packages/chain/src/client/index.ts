import {
  type Chain,
  createPublicClient,
  defineChain,
  type HttpTransport,
  http,
  type PublicClient,
} from 'viem';

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
