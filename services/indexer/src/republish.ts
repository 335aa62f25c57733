import {
  type BlockHeader,
  type ChainClient,
  type ChainRecord,
  createBlockValuator,
  createChainClient,
  eventTopics,
  getChainIdFromNode,
  getHeaders,
  getLogsAdaptive,
  type LensMode,
  type ValuedVault,
} from '@vault-yield/chain';
import type { KafkaSecurity, Logger } from '@vault-yield/common';
import type { RecordEncoding, VaultRecord } from '@vault-yield/domain';
import { createPublisher } from '@vault-yield/log';
import {
  createIndexerStore,
  createPgPool,
  type StoredVaultSeq,
  type StoredVaultSeqSpan,
} from '@vault-yield/store';
import { eventRecord, markRecord, receivedRecord, receivedRecords } from './sync/block.js';
import { decodeAll } from './sync/fetch.js';
import { asTopic } from './sync/filters.js';
import { valuateRecords } from './sync/valuate.js';
import type { VaultMarkState } from './vaults.js';

type Address = `0x${string}`;
type Hash = `0x${string}`;

/** Thrown when the chain no longer gives what was published (a reorg since, or rows missing). */
export class RepublishError extends Error {
  override name = 'RepublishError';
}

export interface RederiveInput {
  client: ChainClient;
  chainId: number;
  factory: Address;
  vault: ValuedVault;
  /** The vault's numbers per block (indexer_vault_seqs), ascending. */
  seqs: readonly StoredVaultSeq[];
  /**
   * The vault's compacted numbers (indexer_vault_seq_spans), ascending, all below `seqs`: each is
   * recounted from the chain whole (its logs from its first block to its last).
   */
  spans?: readonly StoredVaultSeqSpan[];
  /** Only the records of blocks in this range are returned (default: every block numbered). */
  range?: { fromBlock: number; toBlock: number };
  heartbeatOf: (feed: Address) => number;
  /** How the valuation lens runs (default auto: the same values either way). */
  lens?: LensMode | 'auto';
  concurrency?: number;
}

/**
 * A vault's records of the blocks its sequence rows name, re-derived from the chain as the
 * indexer derived them: the same log decoding and record construction (sync/block.ts), numbered
 * from the rows (first..last per block), valued by the same block valuator at each block — so
 * each record is the one published, byte for byte. A block with no event of the vault and one
 * number held a mark (a vault gets its mark only in a block without events of its own).
 *
 * A span (rows compacted below the reorg window) is numbered again from the chain: its blocks with
 * records are those with events of the vault (one record per event) and its listed blocks that
 * may be marks (one record each), numbered from its first number; the count must come out at its
 * block count and last number, and its last block must still have its hash (which names every
 * block below it), or the span is refused.
 */
export async function rederiveVaultRecords(input: RederiveInput): Promise<VaultRecord[]> {
  const { client, chainId, factory, vault, seqs } = input;
  const spans = input.spans ?? [];
  if (seqs.length === 0 && spans.length === 0) return [];
  // Spans lie below the rows (compaction takes a vault's lowest rows first).
  const from = spans[0]?.fromBlock ?? seqs[0]!.blockNumber;
  const to = seqs.at(-1)?.blockNumber ?? spans.at(-1)!.toBlock;
  const pool = vault.pool.toLowerCase() as Address;
  const lists = await Promise.all([
    getLogsAdaptive(client, { address: [vault.vault], topic0: eventTopics.vault }, from, to),
    getLogsAdaptive(client, { address: [factory], topic0: eventTopics.factory }, from, to),
    // tokens sent straight to the vault and liquidity minted for it (transfer / position.received)
    getLogsAdaptive(
      client,
      {
        address: [vault.token0, vault.token1, vault.rewardToken],
        topic0: [eventTopics.transfer],
        topic2: [asTopic(vault.vault)],
      },
      from,
      to,
    ),
    getLogsAdaptive(client, { address: [pool], topic0: [eventTopics.mint] }, from, to),
  ]);
  const logs = lists.flat();
  logs.sort((a, b) => Number(a.blockNumber! - b.blockNumber!) || a.logIndex! - b.logIndex!);
  const decoded = decodeAll(logs, factory, (a) => a === vault.vault);
  if (decoded.failures.length > 0)
    throw new RepublishError(`a log of ${vault.vault} does not decode: ${decoded.failures[0]!.reason}`);
  const events = new Map<number, ChainRecord[]>();
  const received = new Map<number, ChainRecord[]>();
  const add = (m: Map<number, ChainRecord[]>, r: ChainRecord) => {
    const list = m.get(r.blockNumber) ?? [];
    m.set(r.blockNumber, list);
    list.push(r);
  };
  for (const l of logs) {
    const r = decoded.map.get(l);
    if (r?.ok !== true) continue;
    if (r.kind === 'record') {
      if (r.record.vault === vault.vault) add(events, r.record);
      continue;
    }
    const rec = receivedRecord(r.event, (a) => (a === vault.vault ? { pool } : undefined));
    if (rec) add(received, rec);
  }
  // Joined as the block walk joins them: those the vault's own events explain make no record.
  for (const [block, list] of received) {
    const evs = events.get(block) ?? [];
    events.set(block, evs);
    receivedRecords(evs, list);
  }
  // Rows of the spans (their blocks' hashes are their last block's ancestors'), then the rows.
  const all: { row: StoredVaultSeq; anchored: boolean }[] = [];
  for (const span of spans) for (const row of spanRows(span, events)) all.push({ row, anchored: true });
  for (const row of seqs) all.push({ row, anchored: false });
  const range = input.range;
  const wanted = range
    ? all.filter((r) => r.row.blockNumber >= range.fromBlock && r.row.blockNumber <= range.toBlock)
    : all;
  const headers = await getHeaders(client, [
    ...new Set([...wanted.map((r) => r.row.blockNumber), ...spans.map((s) => s.toBlock)]),
  ]);
  const byNumber = headersByNumber(headers);
  for (const span of spans) {
    const h = byNumber.get(span.toBlock);
    if (!h || h.hash !== span.toHash)
      throw new RepublishError(
        `block ${span.toBlock} is no longer ${span.toHash} (a reorg below the window since it was published): ` +
          `the records of blocks ${span.fromBlock}..${span.toBlock} are void`,
      );
  }
  const records: VaultRecord[] = [];
  for (const { row, anchored } of wanted) {
    const h = byNumber.get(row.blockNumber);
    if (!h || (!anchored && h.hash !== row.blockHash))
      throw new RepublishError(
        `block ${row.blockNumber} is no longer ${row.blockHash} (a reorg since it was published): its records are void`,
      );
    const evs = events.get(row.blockNumber) ?? [];
    const count = row.lastSeq - row.firstSeq + 1;
    let block: VaultRecord[];
    if (evs.length === count) block = evs.map((cr) => eventRecord(chainId, cr, h.timestamp));
    else if (evs.length === 0 && count === 1)
      block = [markRecord(chainId, row.blockNumber, h.hash as Hash, h.timestamp, vault.vault)];
    else
      throw new RepublishError(
        `block ${row.blockNumber}: ${evs.length} events of ${vault.vault} for ${count} numbers (${row.firstSeq}..${row.lastSeq})`,
      );
    // Numbered after construction, as sync/sequence.ts does (the same key order).
    block.forEach((r, i) => {
      r.seq = row.firstSeq + i;
    });
    records.push(...block);
  }
  const valuator = createBlockValuator(client, { factory, heartbeatOf: input.heartbeatOf, lens: input.lens });
  // Each block read by its hash (EIP-1898), as the indexer reads it: a reorg since the headers
  // were checked makes the node refuse the read, never answer for the block now at that number.
  try {
    await valuateRecords(records, {
      read: (block, vaults, hash, ts) => valuator.read(block, vaults, hash, ts),
      vault: () => vault,
      concurrency: input.concurrency ?? 4,
    });
  } catch (err) {
    // A read refused because its block is gone: said as the check before it says it.
    const now = await getHeaders(client, [...new Set(records.map((r) => r.blockNumber))])
      .then(headersByNumber)
      .catch(() => null);
    const gone = now && records.find((r) => now.get(r.blockNumber)?.hash !== r.blockHash);
    if (gone)
      throw new RepublishError(
        `block ${gone.blockNumber} is no longer ${gone.blockHash} (a reorg while it was valued): its records are void`,
        { cause: err },
      );
    throw err;
  }
  return records;
}

/** The headers the node gave, by number (a block it has none for is absent). */
function headersByNumber(headers: readonly (BlockHeader | null)[]): Map<number, BlockHeader> {
  const out = new Map<number, BlockHeader>();
  for (const h of headers) if (h) out.set(h.number, h);
  return out;
}

/**
 * A span's rows, numbered again from the chain's events of the vault (`events`, by block): its
 * blocks with events (as many numbers as events) and its blocks that may be marks (one number),
 * ascending from its first number. Hashes are left empty: the span's last block's hash vouches for
 * them. Throws a RepublishError where the count no longer comes out at the span's.
 */
export function spanRows(
  span: StoredVaultSeqSpan,
  events: ReadonlyMap<number, readonly unknown[]>,
): StoredVaultSeq[] {
  const singles = new Set(span.marks);
  const blocks = new Set(span.marks);
  for (const b of events.keys()) if (b >= span.fromBlock && b <= span.toBlock) blocks.add(b);
  const rows: StoredVaultSeq[] = [];
  let seq = span.firstSeq;
  for (const b of [...blocks].sort((x, y) => x - y)) {
    const n = events.get(b)?.length ?? 0;
    if (singles.has(b) && n > 1)
      throw new RepublishError(
        `block ${b}: ${n} events of ${span.vault} where it published one record (span ${span.fromBlock}..${span.toBlock})`,
      );
    const count = singles.has(b) ? 1 : n;
    if (count === 0) continue;
    rows.push({ vault: span.vault, blockNumber: b, blockHash: '', firstSeq: seq, lastSeq: seq + count - 1 });
    seq += count;
  }
  const first = rows[0]?.blockNumber;
  const last = rows.at(-1)?.blockNumber;
  if (
    rows.length !== span.blocks ||
    seq - 1 !== span.lastSeq ||
    first !== span.fromBlock ||
    last !== span.toBlock
  )
    throw new RepublishError(
      `blocks ${span.fromBlock}..${span.toBlock} of ${span.vault}: the chain gives ${rows.length} blocks with records ` +
        `numbered ${span.firstSeq}..${seq - 1} (blocks ${first ?? '-'}..${last ?? '-'}), published: ${span.blocks} ` +
        `blocks numbered ${span.firstSeq}..${span.lastSeq}`,
    );
  return rows;
}

export interface RepublishOptions {
  rpcUrl: string;
  chainId?: number;
  factory: Address;
  databaseUrl: string;
  /** The indexer's schema (indexer_vaults, indexer_vault_seqs, checkpoint). */
  schema: string;
  kafka: {
    brokers: readonly string[];
    topic: string;
    security?: KafkaSecurity;
    encoding?: RecordEncoding;
    /** A one-shot command's wait for a broker to answer (the CLI's budget; unset: none). */
    connectBudgetMs?: number | null;
  };
  heartbeats: { default: number; byFeed: Record<string, number> };
  /** How the valuation lens runs (VALUATION_LENS; default auto). */
  valuationLens?: LensMode | 'auto';
  vault: Address;
  fromBlock: number;
  /** Default: the indexer's checkpoint. */
  toBlock?: number;
  /** Re-derive and report, publish nothing. */
  dryRun?: boolean;
  logger: Logger;
}

export interface RepublishResult {
  vault: Address;
  fromBlock: number;
  toBlock: number;
  records: number;
  firstSeq: number | null;
  lastSeq: number | null;
  /** Numbers inside the range no block row holds (revert records: not re-derivable). */
  notRederived: [number, number][];
  published: boolean;
}

/**
 * `vault-yield republish`: re-derives a vault's records of a block range (rederiveVaultRecords)
 * and publishes them to the log. Records the log holds already are duplicates the projector
 * skips; a held vault folds the missing ones, then what it held.
 */
export async function republishVault(o: RepublishOptions): Promise<RepublishResult> {
  const vault = o.vault.toLowerCase() as Address;
  const pool = createPgPool({ url: o.databaseUrl, schema: o.schema, applicationName: 'republish', max: 2 });
  try {
    const store = createIndexerStore(pool);
    const client = createChainClient({ rpcUrl: o.rpcUrl, cacheTime: 0 });
    const chainId = o.chainId ?? (await getChainIdFromNode(client));
    const v = await store.vault(chainId, vault);
    if (!v)
      throw new RepublishError(`vault ${vault} is unknown to the indexer of chain ${chainId} in ${o.schema}`);
    const checkpoint = await store.checkpoint(chainId);
    const toBlock = o.toBlock ?? checkpoint?.blockNumber ?? o.fromBlock;
    // Compacted spans below the reorg window (recounted from the chain whole), then the rows.
    const spans = await store.vaultSeqSpans(chainId, vault, o.fromBlock, toBlock);
    const seqs = await store.vaultSeqs(chainId, vault, o.fromBlock, toBlock);
    const runs = [...spans, ...seqs];
    const notRederived: [number, number][] = [];
    for (let i = 1; i < runs.length; i++) {
      const gap = runs[i]!.firstSeq - runs[i - 1]!.lastSeq;
      if (gap > 1) notRederived.push([runs[i - 1]!.lastSeq + 1, runs[i]!.firstSeq - 1]);
    }
    const records = await rederiveVaultRecords({
      client,
      chainId,
      factory: o.factory.toLowerCase() as Address,
      vault: {
        vault,
        token0: v.token0 as Address,
        token1: v.token1 as Address,
        pool: v.pool as Address,
        rewardToken: v.rewardToken as Address,
        ranges: (v.state as VaultMarkState).received,
      },
      seqs,
      spans,
      range: { fromBlock: o.fromBlock, toBlock },
      heartbeatOf: (feed) => o.heartbeats.byFeed[feed.toLowerCase()] ?? o.heartbeats.default,
      lens: o.valuationLens,
    });
    let published = false;
    if (!o.dryRun && records.length > 0) {
      const publisher = await createPublisher({
        brokers: o.kafka.brokers,
        clientId: `republish-${chainId}`,
        topic: o.kafka.topic,
        logger: o.logger,
        encoding: o.kafka.encoding,
        connectBudgetMs: o.kafka.connectBudgetMs ?? null,
        ...o.kafka.security,
      });
      try {
        await publisher.publish(records);
        published = true;
      } finally {
        await publisher.close();
      }
    }
    const result: RepublishResult = {
      vault,
      fromBlock: o.fromBlock,
      toBlock,
      records: records.length,
      firstSeq: records[0]?.seq ?? null,
      lastSeq: records.at(-1)?.seq ?? null,
      notRederived,
      published,
    };
    o.logger.info(result, published ? 'records republished' : 'records re-derived (not published)');
    return result;
  } finally {
    await pool.end();
  }
}
