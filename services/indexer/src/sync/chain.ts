import {
  type BlockHeader,
  type BlockValuator,
  type ChainClient,
  createBlockValuator,
  createCountingChainClient,
  createHeadWatcher,
  createValuationReader,
  describeRpcError,
  getChainIdFromNode,
  getHeaders,
  getLogsAdaptive,
  getLogsByBlockHash,
  type HeadWatcher,
  type IndexerLog,
  type LogFilter,
  type RpcStats,
  withRetry,
} from '@vault-yield/chain';
import type { ShortAnswers } from './bloom.js';
import { heartbeatOf, type IndexerCommon } from './context.js';
import { createPriceReads, type PriceReads } from './readings.js';

/** The node: one counting client, every read with the indexer's retries. */
export interface NodeAccess {
  readonly client: ChainClient;
  /** Calls and HTTP requests made so far. */
  readonly stats: RpcStats;
  /** Runs a read with retries (6, backing off; counted and logged), until stop(). */
  rpc<T>(fn: () => Promise<T>): Promise<T>;
  /** Headers by number; `required`: a block the node has not got is retried ('behind'), never left out. */
  headers(numbers: readonly number[], required?: boolean): Promise<Map<number, BlockHeader>>;
  /** eth_getLogs over [from, to], split where the node refuses a range (`onRefused` is told each). */
  getLogs(
    filter: LogFilter,
    from: number,
    to: number,
    onRefused: (from: number, to: number) => void,
  ): Promise<IndexerLog[]>;
  /** Completing eth_getLogs answers a node behind the head left short (sync/bloom.ts). */
  readonly shortAnswers: ShortAnswers;
}

/** The chain as the stages read it: the node, and what reads through it. */
export interface ChainAccess extends NodeAccess {
  /** The chain indexed: the config's, else the node's. */
  readonly chainId: number;
  /** Vault contexts at a block (VaultLens reads). */
  readonly valuator: BlockValuator;
  /** Token and pool states at a block, for the price watch. */
  readonly prices: PriceReads;
  /** New heads over WebSocket (RPC_WS_URL), else polling. */
  readonly heads: HeadWatcher;
}

/** The node's clients (nothing is sent yet). */
export function connectNode(c: IndexerCommon): NodeAccess {
  const o = c.options;
  const { client, logsClient, stats } = createCountingChainClient({
    rpcUrl: o.rpcUrl,
    chainId: o.chainId,
    cacheTime: 0,
    timeoutMs: o.rpcTimeoutMs,
    observer: c.metrics.rpc,
  });
  const rpc = <T>(fn: () => Promise<T>) => withRetries(c, fn);
  return {
    client,
    stats,
    rpc,
    headers: (numbers, required = false) => headersOf(client, rpc, numbers, required),
    getLogs: (filter, from, to, onRefused) => getLogs(c, logsClient, filter, from, to, onRefused),
    shortAnswers: {
      byHash: (f, hash) => rpc(() => getLogsByBlockHash(logsClient, f, hash)),
      log: c.log,
      onShort: () => c.metrics.inconsistentRanges.inc(),
    },
  };
}

/** The chain through `node`: its id (the node's when the config has none), valuator, price reads, heads. */
export async function openChain(c: IndexerCommon, node: NodeAccess): Promise<ChainAccess> {
  const o = c.options;
  const { client, rpc } = node;
  const chainId = o.chainId ?? (await rpc(() => getChainIdFromNode(client)));
  const prices = createPriceReads({
    client,
    reader: createValuationReader(client, { factory: o.factory, cacheSize: 50_000 }),
    factory: o.factory,
    rpc,
  });
  const valuator = createBlockValuator(client, {
    factory: o.factory,
    heartbeatOf: heartbeatOf(o),
    lens: o.valuationLens,
    onMode: (mode) =>
      mode === 'override'
        ? c.log.info({ mode }, 'valuation lens runs from a state override (large batches)')
        : c.log.warn(
            { mode },
            'the node does not take eth_call state overrides: the valuation lens runs as creation code (24 KiB answers, ≈ 26 vaults a call)',
          ),
  });
  const heads = createHeadWatcher({
    wsUrl: o.rpcWsUrl,
    onModeChange: (mode, err) =>
      mode === 'subscribed'
        ? c.log.info({ mode }, 'following new heads over WebSocket')
        : c.log.warn({ mode, err }, 'new-head subscription lost; polling until it is back'),
  });
  return { ...node, chainId, valuator, prices, heads };
}

function withRetries<T>(c: IndexerCommon, fn: () => Promise<T>): Promise<T> {
  return withRetry(fn, {
    retries: 6,
    signal: c.signal,
    onRetry: ({ attempt, kind, error, delayMs }) => {
      c.metrics.rpcErrors.inc({ kind });
      c.log.warn(
        { attempt, kind, delayMs: Math.round(delayMs), err: describeRpcError(error) },
        'RPC call failed; retrying',
      );
    },
  });
}

async function headersOf(
  client: ChainClient,
  rpc: ChainAccess['rpc'],
  numbers: readonly number[],
  required: boolean,
): Promise<Map<number, BlockHeader>> {
  const out = new Map<number, BlockHeader>();
  if (numbers.length === 0) return out;
  const hs = await rpc(() => getHeaders(client, numbers, { required }));
  for (const h of hs) if (h) out.set(h.number, h);
  return out;
}

function getLogs(
  c: IndexerCommon,
  logsClient: ChainClient,
  filter: LogFilter,
  from: number,
  to: number,
  onRefused: (from: number, to: number) => void,
): Promise<IndexerLog[]> {
  return getLogsAdaptive(logsClient, filter, from, to, {
    retries: 6,
    signal: c.signal,
    onRetry: ({ attempt, kind, error }) => {
      c.metrics.rpcErrors.inc({ kind });
      c.log.warn({ attempt, kind, from, to, err: describeRpcError(error) }, 'eth_getLogs failed; retrying');
    },
    onSplit: ({ from: f, to: t, reason }) => {
      c.metrics.rangeSplits.inc();
      c.metrics.rpcErrors.inc({ kind: 'range' });
      onRefused(f, t);
      c.log.info({ from: f, to: t, reason }, 'log range refused; splitting');
    },
  });
}
