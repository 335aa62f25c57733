import { bytesToHex, hexToBytes, type Pool } from '../pool/index.js';

/** Position of a ledger row in the newest-first order; the events cursor encodes it. */
export interface LedgerKey {
  /**
   * Block time (unix ms) of the row. Absent only in cursors issued before the ledger was ordered
   * by time first (migration 0007): those still page correctly (the order is the same), through
   * a filter instead of an index range.
   */
  ts?: number;
  blockNumber: number;
  txIndex: number;
  logIndex: number;
  blockHash: string;
}

export interface LedgerFilter {
  /** The vault's chain (the ledger's indexes lead with the vault; the chain is matched beside it). */
  chainId: number;
  /** The vault's address (lowercase). */
  vault: string;
  /** Record types to return; must be non-empty (the reader passes the activity vocabulary). */
  types: readonly string[];
  /** Unix ms, inclusive. */
  since?: number;
  /** Unix ms, exclusive. */
  until?: number;
  /** Rows strictly after this key in newest-first order. */
  after?: LedgerKey;
  limit: number;
}

export interface LedgerPage {
  /** Each row as JSON text (the ledger row shape built by Postgres), newest first. */
  rows: string[];
  /** Key of the last row returned when more rows follow, else null. */
  next: LedgerKey | null;
}

/** The ledger's keys are bytes (migration 0014), served as "0x" + lowercase hex. */
const [VAULT, TX_HASH, BLOCK_HASH] = [bytesToHex('vault'), bytesToHex('tx_hash'), bytesToHex('block_hash')];
/** A ledger row's served id (`chainId:blockHash:txHash:logIndex:vault`, see LedgerRow.id). */
const ID = `chain_id || ':' || ${BLOCK_HASH} || ':' || ${TX_HASH} || ':' || log_index || ':' || ${VAULT}`;
/**
 * The served ledger row, built in SQL so the reader sends it without re-serialising:
 * { id, vault, chainId, type, txHash, blockNumber, blockHash, txIndex, logIndex, ts, data, amounts }.
 */
const ROW = `json_build_object(
    'id', ${ID},
    'vault', ${VAULT}, 'chainId', chain_id, 'type', type, 'txHash', ${TX_HASH},
    'blockNumber', block_number, 'blockHash', ${BLOCK_HASH}, 'txIndex', tx_index, 'logIndex', log_index,
    'ts', ts, 'data', payload, 'amounts', amounts)::text as json`;
/** block_hash is bytes (migration 0014), ordered as its lowercase hex text was. */
const ORDER = 'order by block_number desc, tx_index desc, log_index desc, block_hash desc';
/**
 * A vault's page order: the same order as ORDER (block time never decreases as blocks advance),
 * led by ts so ledger_vault_ts serves it, the since/until window and the cursor as one range.
 */
const PAGE_ORDER = `order by ts desc, ${ORDER.slice('order by '.length)}`;

interface PageRow {
  json: string;
  ts: string;
  block_number: number;
  tx_index: number;
  log_index: number;
  block_hash: string;
}

/**
 * A type filter of at most this many types is read type by type (`?type=`): each type's newest
 * rows from ledger_vault_type_ts (migration 0017) as an index range, merged. A longer list (the
 * whole activity vocabulary when no type is asked for) is read from ledger_vault_ts, skipping
 * the rows of other types.
 */
export const PER_TYPE_MAX = 8;

/** One page of a vault's ledger, newest first; keyset pagination is stable under inserts. */
export async function ledgerPage(pool: Pool, f: LedgerFilter): Promise<LedgerPage> {
  if (f.types.length === 0) return { rows: [], next: null };
  const perType = f.types.length <= PER_TYPE_MAX;
  const values: unknown[] = [f.vault, f.types, f.chainId];
  const where = [
    `vault = ${hexToBytes('$1')}`,
    'chain_id = $3::int',
    perType ? 'type = t.wanted' : 'type = any($2::text[])',
  ];
  if (f.since !== undefined) {
    values.push(f.since);
    where.push(`ts >= $${values.length}`);
  }
  if (f.until !== undefined) {
    values.push(f.until);
    where.push(`ts < $${values.length}`);
  }
  if (f.after) {
    const a = f.after;
    values.push(a.blockNumber, a.txIndex, a.logIndex, a.blockHash);
    const n = values.length;
    if (a.ts === undefined) {
      where.push(
        `(block_number, tx_index, log_index, block_hash) < ($${n - 3}, $${n - 2}, $${n - 1}, ${hexToBytes(`$${n}`)})`,
      );
    } else {
      values.push(a.ts);
      where.push(
        `(ts, block_number, tx_index, log_index, block_hash) < ($${n + 1}, $${n - 3}, $${n - 2}, $${n - 1}, ${hexToBytes(`$${n}`)})`,
      );
    }
  }
  values.push(f.limit + 1);
  const n = values.length;
  // Per type: a busy vault's rare type is found by an index range of its own, not by reading
  // the vault's rows newest first until enough of that type turn up (a separate statement, so a
  // generic plan of one form never serves the other).
  const text = perType
    ? `select ${ROW}, ts, block_number, tx_index, log_index, ${BLOCK_HASH} as block_hash
      from unnest($2::text[]) as t(wanted), lateral (
        select * from ledger where ${where.join(' and ')} ${PAGE_ORDER} limit $${n}
      ) as ledger
      ${PAGE_ORDER} limit $${n}`
    : `select ${ROW}, ts, block_number, tx_index, log_index, ${BLOCK_HASH} as block_hash from ledger
    where ${where.join(' and ')} ${PAGE_ORDER} limit $${n}`;
  const cursor = f.after ? (f.after.ts === undefined ? 'c0' : 'c') : '';
  const name = `reader.ledger${perType ? '-t' : ''}.${f.since !== undefined ? 's' : ''}${f.until !== undefined ? 'u' : ''}${cursor}`;
  const { rows } = await pool.query<PageRow>({ name, text, values });
  const more = rows.length > f.limit;
  const page = more ? rows.slice(0, f.limit) : rows;
  const last = page.at(-1);
  return {
    rows: page.map((r) => r.json),
    next:
      more && last
        ? {
            ts: Number(last.ts),
            blockNumber: last.block_number,
            txIndex: last.tx_index,
            logIndex: last.log_index,
            blockHash: last.block_hash,
          }
        : null,
  };
}

/** Position of a row in a transaction's order (ORDER, then chain desc, vault asc); the tx cursor encodes it. */
export interface TxLedgerKey {
  blockNumber: number;
  txIndex: number;
  logIndex: number;
  blockHash: string;
  chainId: number;
  vault: string;
}

export interface TxLedgerFilter {
  txHash: string;
  /** Record types to return; must be non-empty. */
  types: readonly string[];
  /** Rows strictly after this key in the transaction's order. */
  after?: TxLedgerKey;
  limit: number;
}

export interface TxLedgerPage {
  rows: string[];
  next: TxLedgerKey | null;
}

/**
 * One page of the ledger rows of one transaction across vaults (and chains), newest first: the
 * rows of a transaction come by the primary key (it leads with tx_hash), at most `limit` of them
 * rendered; the next page starts after the last row's key.
 */
export async function ledgerTxPage(pool: Pool, f: TxLedgerFilter): Promise<TxLedgerPage> {
  if (f.types.length === 0) return { rows: [], next: null };
  const values: unknown[] = [f.txHash, f.types];
  const where = [`tx_hash = ${hexToBytes('$1')}`, 'type = any($2::text[])'];
  if (f.after) {
    const a = f.after;
    values.push(a.blockNumber, a.txIndex, a.logIndex, a.blockHash, a.chainId, a.vault);
    const k = values.length - 6;
    const before = `(block_number, tx_index, log_index, block_hash, chain_id)`;
    const at = `($${k + 1}, $${k + 2}, $${k + 3}, ${hexToBytes(`$${k + 4}`)}, $${k + 5})`;
    // Descending on all but vault (ascending): a row comparison cannot mix directions.
    where.push(`(${before} < ${at} or (${before} = ${at} and vault > ${hexToBytes(`$${k + 6}`)}))`);
  }
  values.push(f.limit + 1);
  const { rows } = await pool.query<{
    json: string;
    block_number: number;
    tx_index: number;
    log_index: number;
    block_hash: string;
    chain_id: number;
    vault_hex: string;
  }>({
    name: f.after ? 'reader.ledger-tx-page.c' : 'reader.ledger-tx-page',
    text: `select ${ROW}, block_number, tx_index, log_index, ${BLOCK_HASH} as block_hash, chain_id,
        ${VAULT} as vault_hex
      from ledger where ${where.join(' and ')}
      ${ORDER}, chain_id desc, vault asc limit $${values.length}`,
    values,
  });
  const more = rows.length > f.limit;
  const page = more ? rows.slice(0, f.limit) : rows;
  const last = page.at(-1);
  return {
    rows: page.map((r) => r.json),
    next:
      more && last
        ? {
            blockNumber: Number(last.block_number),
            txIndex: last.tx_index,
            logIndex: last.log_index,
            blockHash: last.block_hash,
            chainId: last.chain_id,
            vault: last.vault_hex,
          }
        : null,
  };
}

/** Ledger rows of one transaction across vaults (and chains), newest first, of the given types. */
export async function ledgerByTx(pool: Pool, txHash: string, types: readonly string[]): Promise<string[]> {
  const { rows } = await pool.query<{ json: string }>({
    name: 'reader.ledger-tx',
    text: `select ${ROW} from ledger where tx_hash = ${hexToBytes('$1')} and type = any($2::text[])
      ${ORDER}, chain_id desc, vault asc`,
    values: [txHash, types],
  });
  return rows.map((r) => r.json);
}

/** The served ledger row's SQL (JSON text as `json`), its id and the vault as hex, for other queries. */
export const LEDGER_ROW_SQL = { row: ROW, id: ID, vault: VAULT } as const;
