import { refOf, splitVaultIds, vaultId } from '@vault-yield/domain';
import { bytesToHex, copyHex, hexToBytes, type PoolClient } from '../pool/index.js';
import { LEDGER_ROW_SQL } from '../queries/ledger.js';
import { type BinaryField, CopyBuffer, type CopyWriter, copyBinary, copyRows, copyText } from './copy.js';
import type { DeadLetterRow, EquityRow, LedgerPosition, LedgerRow, StoredVault } from './rows.js';
import type { RunnerTx } from './runner-tx.js';
import type { BodyIdentity, RecordIdentity, StoredRecord, VaultWrites } from './vault-writes.js';

/**
 * A batch transaction of the vault projection: the runner's part (offsets, epochs, dead letters,
 * stream notices) and the vault projection's writes, on one connection. `projectionTx` makes one.
 */
export interface ProjectionTx extends RunnerTx, VaultWrites {}

/** The channel of the projection's commit notifications (see ProjectionTx.noteCommit). */
export const STREAM_CHANNEL = 'vault_yield_commits';
/** Largest payload sent in full (NOTIFY refuses 8000 bytes or more). */
const NOTIFY_MAX = 7_000;
/** stream_commits rows kept (older ones are pruned, a thousand commits at a time). */
export const STREAM_COMMITS_KEPT = 100_000;

/** The payload of a commit notification. */
export interface CommitNotice {
  schema: string;
  seq: string;
  /** The vaults touched, by vault id (`eip155:{chainId}:{address}`); absent when too many to send (then `count`). */
  vaults?: string[];
  count?: number;
}

/** A notification's payload, compact when the full form would be too long. */
export function commitNotice(schema: string, seq: string, vaults: readonly string[]): string {
  const full = JSON.stringify({ schema, seq, vaults: [...vaults] } satisfies CommitNotice);
  return Buffer.byteLength(full) < NOTIFY_MAX
    ? full
    : JSON.stringify({ schema, seq, count: vaults.length } satisfies CommitNotice);
}

/** The ledger's fold order (`order by block_number, tx_index, log_index, chain_id, tx_hash, block_hash`). */
export function compareFoldOrder(a: RecordIdentity, b: RecordIdentity): number {
  return (
    comparePosition(a, b) ||
    a.chainId - b.chainId ||
    (a.txHash < b.txHash ? -1 : a.txHash > b.txHash ? 1 : 0) ||
    (a.blockHash < b.blockHash ? -1 : a.blockHash > b.blockHash ? 1 : 0)
  );
}

const bodyKey = (r: BodyIdentity): string => `${r.chainId}|${r.blockHash}|${r.txHash}|${r.logIndex}`;

/** A frame's length prefix: 4 bytes, big-endian (what the migration's int4send writes). */
const FRAME_HEADER = 4;

/** A ledger row as a line of `copy ledger` (text format). */
function ledgerLine(w: CopyWriter, r: LedgerRow): void {
  w.text(
    `${r.chainId}\t${copyHex(r.blockHash)}\t${copyHex(r.txHash)}\t${r.logIndex}\t${copyHex(r.vault)}\t` +
      `${r.blockNumber}\t${r.txIndex}\t${r.ts}\t${copyText(r.type)}\t${copyText(r.payload)}\t` +
      `${r.amounts === undefined ? '\\N' : copyText(r.amounts)}\n`,
  );
}

/** An equity point as a line of `copy equity_points` (text format). */
function equityLine(w: CopyWriter, r: EquityRow): void {
  w.text(
    `${r.chainId}\t${copyHex(r.vault)}\t${r.ts}\t${r.blockNumber}\t${r.seq}\t` +
      `${copyText(r.valueUsd)}\t${copyText(r.capitalInUsd)}\t${copyText(r.capitalOutUsd)}\t` +
      `${copyText(r.strategy)}\t${copyText(r.returnIndex)}\t` +
      `${r.holdValueUsd === null ? '\\N' : copyText(r.holdValueUsd)}\n`,
  );
}

/** Ledger rows encoded for `copyLedger` as they come (see CopyBuffer). */
export const ledgerCopyBuffer = (): CopyBuffer<LedgerRow> => new CopyBuffer(ledgerLine);
/** Equity points encoded for `insertEquity` as they come (see CopyBuffer). */
export const equityCopyBuffer = (): CopyBuffer<EquityRow> => new CopyBuffer(equityLine);

function frameHeader(length: number): Buffer {
  const b = Buffer.allocUnsafe(FRAME_HEADER);
  b.writeUInt32BE(length);
  return b;
}

/** The bodies of a bundle, in order (subarrays of it). */
export function unframe(frames: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < frames.length; ) {
    if (at + FRAME_HEADER > frames.length) throw new Error('record bundle ends inside a frame header');
    const n = frames.readUInt32BE(at);
    at += FRAME_HEADER;
    if (at + n > frames.length) throw new Error('record bundle ends inside a record');
    out.push(frames.subarray(at, at + n));
    at += n;
  }
  return out;
}

export function projectionTx(client: PoolClient): ProjectionTx {
  /** Ids of the ledger rows this transaction's reverts deleted (for noteCommit's `retracted`). */
  const retracted: string[] = [];
  /** The vaults whose snapshots this transaction wrote (ids), and the latest block time among them. */
  const folded = { vaults: [] as string[], to: null as number | null };
  return {
    async lockPartition(groupId, topic, partition) {
      return (await this.lockPartitionAt(groupId, topic, partition)).offset;
    },

    async lockPartitionAt(groupId, topic, partition) {
      // The upsert takes the row lock and, under READ COMMITTED, returns the latest committed
      // offset even when it had to wait for another transaction holding the lock.
      const { rows } = await client.query<{ next_offset: string | number; epoch: string; inserted: boolean }>(
        `insert into consumer_offsets as o (group_id, topic, partition, next_offset)
         values ($1, $2, $3, -1)
         on conflict (group_id, topic, partition) do update set next_offset = o.next_offset
         returning next_offset, epoch::text, (xmax = 0) as inserted`,
        [groupId, topic, partition],
      );
      const row = rows[0];
      const epoch = row?.epoch ?? '0';
      if (!row || row.inserted || Number(row.next_offset) < 0) return { offset: null, epoch };
      return { offset: String(row.next_offset), epoch };
    },

    async bumpEpochs(topic, partition) {
      await client.query(
        'update consumer_offsets set epoch = epoch + 1 where topic = $1 and partition = $2',
        [topic, partition],
      );
    },

    lockDeadLetters: (id) =>
      lockLetters(client, '$1::int8 is null or id = $1 order by topic, partition, "offset"', [id ?? null]),

    async deleteDeadLetters(ids) {
      if (ids.length === 0) return;
      await client.query('delete from dead_letters where id = any($1::int8[])', [ids]);
    },

    async deleteReconciled(id) {
      const { chainId, vault } = refOf(id);
      await client.query(
        `delete from ledger where chain_id = $1 and vault = ${hexToBytes('$2')} and type = 'balance.reconciled'`,
        [chainId, vault],
      );
    },

    async savePartition({ groupId, topic, partition, nextOffset }) {
      await client.query(
        `update consumer_offsets set next_offset = $4, updated_at = now(), folded_to = greatest(folded_to, $5::int8)
         where group_id = $1 and topic = $2 and partition = $3`,
        [groupId, topic, partition, nextOffset, folded.to],
      );
      if (folded.vaults.length === 0) return;
      const ids = splitVaultIds(folded.vaults);
      await client.query(
        `update vault_snapshot set log_topic = $1, log_partition = $2
         where (chain_id, vault) in (select * from unnest($3::int[], $4::text[]))
           and (log_topic is distinct from $1 or log_partition is distinct from $2)`,
        [topic, partition, ids.chainIds, ids.vaults],
      );
    },

    async loadVaults(ids) {
      const out = new Map<string, StoredVault>();
      if (ids.length === 0) return out;
      const { chainIds, vaults } = splitVaultIds(ids);
      const { rows } = await client.query<{
        chain_id: number;
        vault: string;
        state: unknown;
        records_applied: number;
        created_at: number;
        last_record_id: string;
        head_block_number: number;
        head_tx_index: number;
        head_log_index: number;
        last_seq: string | null;
        held: boolean;
      }>(
        `select chain_id, vault, state, records_applied, created_at, last_record_id,
                head_block_number, head_tx_index, head_log_index, last_seq, held
         from vault_snapshot where (chain_id, vault) in (select * from unnest($1::int[], $2::text[]))`,
        [chainIds, vaults],
      );
      for (const r of rows) {
        out.set(vaultId(r.chain_id, r.vault), {
          chainId: r.chain_id,
          vault: r.vault,
          state: r.state,
          recordsApplied: Number(r.records_applied),
          createdAt: Number(r.created_at),
          lastRecordId: r.last_record_id,
          head: {
            blockNumber: Number(r.head_block_number),
            txIndex: r.head_tx_index,
            logIndex: r.head_log_index,
          },
          lastSeq: r.last_seq === null ? null : Number(r.last_seq),
          held: r.held,
        });
      }
      return out;
    },

    async existingRecords(keys) {
      if (keys.length === 0) return [];
      const { rows } = await client.query<{
        vault: string;
        chain_id: number;
        block_hash: string;
        tx_hash: string;
        log_index: number;
      }>(
        `select k.vault, k.chain_id, k.block_hash, k.tx_hash, k.log_index
         from unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::int[])
              as k(vault, chain_id, block_hash, tx_hash, log_index)
         join ledger l on l.tx_hash = ${hexToBytes('k.tx_hash')} and l.log_index = k.log_index
           and l.vault = ${hexToBytes('k.vault')} and l.block_hash = ${hexToBytes('k.block_hash')}
           and l.chain_id = k.chain_id`,
        [
          keys.map((k) => k.vault),
          keys.map((k) => k.chainId),
          keys.map((k) => k.blockHash),
          keys.map((k) => k.txHash),
          keys.map((k) => k.logIndex),
        ],
      );
      return rows.map((r) => ({
        vault: r.vault,
        chainId: r.chain_id,
        blockHash: r.block_hash,
        txHash: r.tx_hash,
        logIndex: r.log_index,
      }));
    },

    async insertLedger(rows) {
      if (rows.length === 0) return 0;
      const parts = new Array<string>(rows.length);
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i] as LedgerRow;
        parts[i] =
          `{"c":${r.chainId},"bh":${JSON.stringify(r.blockHash)},"th":${JSON.stringify(r.txHash)},"li":${r.logIndex},` +
          `"v":${JSON.stringify(r.vault)},"bn":${r.blockNumber},"ti":${r.txIndex},"ts":${r.ts},"t":${JSON.stringify(r.type)},` +
          `"p":${r.payload},"a":${r.amounts ?? 'null'}}`;
      }
      const res = await client.query(
        `insert into ledger (chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload, amounts)
         select c, ${hexToBytes('bh')}, ${hexToBytes('th')}, li, ${hexToBytes('v')}, bn, ti, ts, t, p, a
         from json_to_recordset($1::json)
           as x(c int, bh text, th text, li int, v text, bn int8, ti int, ts int8, t text, p json, a jsonb)
         on conflict do nothing`,
        [`[${parts.join(',')}]`],
      );
      return res.rowCount ?? 0;
    },

    async setLedgerAmounts(rows) {
      if (rows.length === 0) return;
      const json = rows.map(
        (r) =>
          `{"c":${r.chainId},"bh":${JSON.stringify(r.blockHash)},"th":${JSON.stringify(r.txHash)},"li":${r.logIndex},` +
          `"v":${JSON.stringify(r.vault)},"a":${r.amounts}}`,
      );
      await client.query(
        `update ledger l set amounts = x.a
           from json_to_recordset($1::json) as x(c int, bh text, th text, li int, v text, a jsonb)
          where l.tx_hash = ${hexToBytes('x.th')} and l.log_index = x.li and l.vault = ${hexToBytes('x.v')}
            and l.block_hash = ${hexToBytes('x.bh')} and l.chain_id = x.c`,
        [`[${json.join(',')}]`],
      );
    },

    async copyLedger(rows) {
      await copyRows(
        client,
        'copy ledger (chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload, amounts) from stdin',
        CopyBuffer.of(rows, ledgerLine),
      );
    },

    async copyBundles(bundles) {
      if (bundles.size === 0) return;
      const rows: BinaryField[][] = [];
      for (const [id, records] of bundles) {
        const { chainId, vault } = refOf(id);
        const frames: Uint8Array[] = [];
        for (const r of records) frames.push(frameHeader(r.byteLength), r);
        // Written from 0013 on: the bundle is the authority on its sequenced marks.
        rows.push([chainId, vault, frames, true]);
      }
      await copyBinary(
        client,
        'copy record_bundles (chain_id, vault, frames, marks_off_ledger) from stdin (format binary)',
        rows,
      );
    },

    async insertEquity(rows) {
      // The key (chain_id, vault, ts, seq) is new by construction (seq = records applied): COPY, no conflicts.
      await copyRows(
        client,
        'copy equity_points (chain_id, vault, ts, block_number, seq, value_usd, capital_in_usd, capital_out_usd, strategy, return_index, hold_usd) from stdin',
        CopyBuffer.of(rows, equityLine),
      );
    },

    async upsertSnapshots(rows) {
      if (rows.length === 0) return;
      for (const r of rows) {
        folded.vaults.push(vaultId(r.chainId, r.vault));
        if (folded.to === null || r.updatedAt > folded.to) folded.to = r.updatedAt;
      }
      const parts = rows.map(
        (r) =>
          `{"v":${JSON.stringify(r.vault)},"c":${r.chainId},"o":${JSON.stringify(r.owner)},"s":${JSON.stringify(r.strategy)},` +
          `"st":${JSON.stringify(r.status)},"sn":${r.snapshot},"sx":${r.state},"l":${JSON.stringify(r.lastRecordId)},` +
          `"n":${r.recordsApplied},"ca":${r.createdAt},"ua":${r.updatedAt},` +
          `"hb":${r.head.blockNumber},"ht":${r.head.txIndex},"hl":${r.head.logIndex},"sq":${r.lastSeq},"hd":${r.held}}`,
      );
      await client.query(
        `insert into vault_snapshot (vault, chain_id, owner, strategy, status, snapshot, state, last_record_id,
                                     records_applied, created_at, updated_at,
                                     head_block_number, head_tx_index, head_log_index, last_seq, held)
         select v, c, o, s, st, sn, sx, l, n, ca, ua, hb, ht, hl, sq, hd
         from json_to_recordset($1::json)
           as x(v text, c int, o text, s text, st text, sn json, sx json, l text, n int8, ca int8, ua int8,
                hb int8, ht int, hl int, sq int8, hd bool)
         on conflict (chain_id, vault) do update set
           owner = excluded.owner, strategy = excluded.strategy,
           status = excluded.status, snapshot = excluded.snapshot, state = excluded.state,
           last_record_id = excluded.last_record_id, records_applied = excluded.records_applied,
           created_at = excluded.created_at, updated_at = excluded.updated_at,
           head_block_number = excluded.head_block_number, head_tx_index = excluded.head_tx_index,
           head_log_index = excluded.head_log_index, last_seq = excluded.last_seq, held = excluded.held`,
        [`[${parts.join(',')}]`],
      );
    },

    async replacePositions(ids, rows) {
      if (ids.length > 0) {
        const { chainIds, vaults } = splitVaultIds(ids);
        await client.query(
          'delete from positions where (chain_id, vault) in (select * from unnest($1::int[], $2::text[]))',
          [chainIds, vaults],
        );
      }
      if (rows.length === 0) return;
      const parts = rows.map(
        (r) =>
          `{"c":${r.chainId},"v":${JSON.stringify(r.vault)},"id":${JSON.stringify(r.positionId)},"p":${JSON.stringify(r.pool)},` +
          `"tl":${r.tickLower},"tu":${r.tickUpper},"l":${JSON.stringify(r.liquidity)},"ir":${r.inRange},"w":${r.view}}`,
      );
      await client.query(
        `insert into positions (chain_id, vault, position_id, pool, tick_lower, tick_upper, liquidity, in_range, view)
         select c, v, id, p, tl, tu, l::numeric, ir, w
         from json_to_recordset($1::json)
           as x(c int, v text, id text, p text, tl int, tu int, l text, ir bool, w json)`,
        [`[${parts.join(',')}]`],
      );
    },

    async insertDeadLetters(rows) {
      if (rows.length === 0) return;
      await client.query(
        `insert into dead_letters (topic, partition, "offset", key, value, reason, vault, kind, seq, block_number, chain_id)
         select * from unnest($1::text[], $2::int[], $3::int8[], $4::bytea[], $5::bytea[], $6::text[],
                              $7::text[], $8::text[], $9::int8[], $10::int8[], $11::int[])
         on conflict (topic, partition, "offset") do nothing`,
        [
          rows.map((r) => r.topic),
          rows.map((r) => r.partition),
          rows.map((r) => r.offset),
          rows.map((r) => r.key),
          rows.map((r) => r.value),
          rows.map((r) => r.reason),
          rows.map((r) => r.vault),
          rows.map((r) => r.kind),
          rows.map((r) => r.seq ?? null),
          rows.map((r) => r.blockNumber ?? null),
          // A letter's chain only with its vault (a vault is both).
          rows.map((r) => (r.vault === null ? null : (r.chainId ?? null))),
        ],
      );
    },

    async markBehind(ids, addresses = []) {
      if (ids.length === 0 && addresses.length === 0) return;
      const { chainIds, vaults } = splitVaultIds(ids);
      // Only vaults with dead letters pay for the json rewrite; the others match no row. A vault
      // held behind a gap also says which numbers (and blocks) are missing: what to republish.
      // A letter of no known chain (its record did not decode; its key names an address) counts
      // for the vaults at its address on every chain: any of them may miss it.
      await client.query(
        `update vault_snapshot s
         set snapshot = (s.snapshot::jsonb || jsonb_build_object('behind', b.behind || case
               when b.held_seq is null then '{}'::jsonb
               else jsonb_build_object('gap', jsonb_build_object(
                 'lastSeq', s.last_seq, 'missingFrom', coalesce(s.last_seq, 0) + 1,
                 'missingTo', b.held_seq - 1, 'fromBlock', greatest(s.head_block_number, 0),
                 'toBlock', b.held_block))
               end))::json
         from (
           select t.chain_id, t.vault, jsonb_build_object(
                    'deadLetters', count(*),
                    'kinds', jsonb_agg(distinct d.kind),
                    'first', (array_agg(jsonb_build_object('partition', d.partition, 'offset', d."offset"::text)
                                        order by d.partition, d."offset"))[1]) as behind,
                  min(d.seq) filter (where d.kind = 'gap') as held_seq,
                  (array_agg(d.block_number order by d.seq)
                     filter (where d.kind = 'gap'))[1] as held_block
           from (select chain_id, vault from vault_snapshot
                  where (chain_id, vault) in (select * from unnest($1::int[], $2::text[]))
                 union
                 select chain_id, vault from vault_snapshot where vault = any($3::text[])) t
           join dead_letters d on d.vault = t.vault and (d.chain_id = t.chain_id or d.chain_id is null)
           group by t.chain_id, t.vault
         ) b
         where s.chain_id = b.chain_id and s.vault = b.vault`,
        [chainIds, vaults, addresses],
      );
    },

    async lockHeld(ids) {
      if (ids.length === 0) return [];
      const { chainIds, vaults } = splitVaultIds(ids);
      return lockLetters(
        client,
        `kind = 'gap' and (chain_id, vault) in (select * from unnest($1::int[], $2::text[]))
         order by chain_id, vault, seq, id`,
        [chainIds, vaults],
      );
    },

    async deleteOrphaned(id, fromBlock, blockHashes) {
      const { chainId, vault } = refOf(id);
      const res = await client.query<{ id: string }>(
        `delete from ledger where chain_id = $4 and vault = ${hexToBytes('$1')} and block_number >= $2
           and block_hash in (select ${hexToBytes('h')} from unnest($3::text[]) h)
         returning ${LEDGER_ROW_SQL.id} as id`,
        [vault, fromBlock, blockHashes, chainId],
      );
      for (const r of res.rows) retracted.push(r.id);
      return res.rowCount ?? 0;
    },

    async vaultRecords<R extends RecordIdentity>(
      id: string,
      { decode, offLedger }: { decode: (body: Buffer) => R | undefined; offLedger: (r: R) => boolean },
    ) {
      const { chainId, vault } = refOf(id);
      const { rows: ids } = await client.query<{
        chainId: number;
        blockHash: string;
        txHash: string;
        logIndex: number;
      }>(
        `select chain_id as "chainId", ${bytesToHex('block_hash')} as "blockHash", ${bytesToHex('tx_hash')} as "txHash",
                log_index as "logIndex"
         from ledger where chain_id = $2 and vault = ${hexToBytes('$1')} and type <> 'balance.reconciled'
         order by block_number, tx_index, log_index, chain_id, tx_hash, block_hash`,
        [vault, chainId],
      );
      const { rows: bundles } = await client.query<{ frames: Buffer; marks_off_ledger: boolean }>(
        'select frames, marks_off_ledger from record_bundles where chain_id = $1 and vault = $2 order by id',
        [chainId, vault],
      );
      const bodies = new Map<string, StoredRecord<R>>();
      // Records without a ledger row, from the bundles that are their authority (0013 on).
      const unledgered = new Set<string>();
      for (const b of bundles)
        for (const body of unframe(b.frames)) {
          const record = decode(body);
          if (record === undefined) continue;
          // Later bundles win: a republished record's latest body.
          const k = bodyKey(record);
          bodies.set(k, { record, body });
          if (b.marks_off_ledger && offLedger(record)) unledgered.add(k);
        }
      const out = ids.map((id) => {
        // The same key function for rows and bodies: one format of the identity.
        const k = bodyKey(id);
        const stored = bodies.get(k);
        if (stored === undefined)
          throw new Error(`ledger row ${k} of ${id} has no record body in record_bundles`);
        unledgered.delete(k);
        return stored;
      });
      if (unledgered.size === 0) return out;
      for (const k of unledgered) out.push(bodies.get(k) as StoredRecord<R>);
      return out.sort((a, b) => compareFoldOrder(a.record, b.record));
    },

    async rewriteBundles(id, bodies) {
      const { chainId, vault } = refOf(id);
      await client.query('delete from record_bundles where chain_id = $1 and vault = $2', [chainId, vault]);
      if (bodies.length > 0) await this.copyBundles(new Map([[id, bodies]]));
    },

    async clearVault(id, { snapshot }) {
      const { chainId, vault } = refOf(id);
      const key = [chainId, vault];
      await client.query(
        `delete from equity_points where chain_id = $1 and vault = ${hexToBytes('$2')}`,
        key,
      );
      await client.query('delete from positions where chain_id = $1 and vault = $2', key);
      if (snapshot) await client.query('delete from vault_snapshot where chain_id = $1 and vault = $2', key);
    },

    async noteCommit(touched) {
      const vaults = [...new Set(touched)].sort();
      if (vaults.length === 0) return null;
      // The lock comes first (the insert reads from it), and is held until the commit.
      const { rows } = await client.query<{ seq: string; schema: string }>(
        `with l as (select pg_advisory_xact_lock(hashtext('vault-yield-stream:' || current_schema())))
         insert into stream_commits (vaults, retracted) select $1::text[], $2::text[] from l
         returning seq::text, current_schema() as schema`,
        [vaults, retracted.length > 0 ? retracted : null],
      );
      const { seq, schema } = rows[0] as { seq: string; schema: string };
      await client.query('select pg_notify($1, $2)', [STREAM_CHANNEL, commitNotice(schema, seq, vaults)]);
      if (BigInt(seq) % 1000n === 0n)
        await client.query('delete from stream_commits where seq <= $1', [
          (BigInt(seq) - BigInt(STREAM_COMMITS_KEPT)).toString(),
        ]);
      return seq;
    },
  };
}

/** True for Postgres' unique_violation (23505), e.g. a COPY that met a row already there. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}

export function comparePosition(a: LedgerPosition, b: LedgerPosition): number {
  return a.blockNumber - b.blockNumber || a.txIndex - b.txIndex || a.logIndex - b.logIndex;
}

/** Dead letters matching `whereOrder` (a condition and its order), locked for update. */
async function lockLetters(client: PoolClient, whereOrder: string, params: unknown[]) {
  const { rows } = await client.query<{
    id: string;
    topic: string;
    partition: number;
    offset: string;
    key: Buffer | null;
    value: Buffer | null;
    reason: string;
    vault: string | null;
    chain_id: number | null;
    kind: DeadLetterRow['kind'];
    seq: string | null;
  }>(
    `select id::text, topic, partition, "offset"::text as offset, key, value, reason, vault, chain_id, kind, seq::text
     from dead_letters where ${whereOrder} for update`,
    params,
  );
  return rows.map(({ chain_id, ...r }) => ({
    ...r,
    chainId: chain_id,
    id: Number(r.id),
    seq: r.seq === null ? null : Number(r.seq),
  }));
}
