import { activityTypes } from '@vault-yield/domain';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrations } from '../migrations/index.js';
import { createPgPool, type Pool, withTransaction } from '../pool/index.js';
import { createWebhookStore, type WebhookStore, webhookMessageId } from './index.js';

/**
 * Callbacks per chain (#45) on a real Postgres, at the store: a vault is (chain, address) in the
 * endpoint filter, the marks and the queues; and migration 0029 gives the rows of a database of
 * the last build (one chain, keyed by the address) their chain.
 */
let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase('webhook_chains');
  pool = createPgPool({ url: db.writerUrl, applicationName: 'webhook-chains-test', max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const A = '0x00000000000000000000000000000000000000aa';
const B = '0x00000000000000000000000000000000000000bb';
const C = '0x00000000000000000000000000000000000000cc';
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

interface Row {
  chainId: number;
  vault: string;
  block: number;
  type?: string;
}
let tx = 0;
/** Ledger rows of `schema`, written in one transaction (one commit_xid); returns it. */
async function writeLedger(schema: string, rows: readonly Row[]): Promise<string> {
  return withTransaction(pool, async (client) => {
    for (const r of rows)
      await client.query(
        `insert into ${schema}.ledger (chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload)
         values ($1, decode(substr($2, 3), 'hex'), decode(substr($3, 3), 'hex'), 0, decode(substr($4, 3), 'hex'), $5::bigint, 0, $5::bigint * 1000, $6, '{}')`,
        [r.chainId, hash(r.block), hash(++tx), r.vault, r.block, r.type ?? 'deposit'],
      );
    const { rows: x } = await client.query<{ xid: string }>('select pg_current_xact_id()::text as xid');
    return x[0]?.xid as string;
  });
}

const deadline = () => new Date(Date.now() + 60_000);

/**
 * Enqueues for `endpointId` until `scanned` rows were scanned: a row is scanned once no older
 * transaction of the cluster runs (other tests' included), so one call may find none yet.
 */
async function drain(store: WebhookStore, endpointId: number, schema: string, scanned: number) {
  let total = { scanned: 0, queued: 0, switched: false };
  const until = Date.now() + 30_000;
  while (total.scanned < scanned) {
    if (Date.now() > until) throw new Error(`scanned ${total.scanned} of ${scanned} rows`);
    const r = await store.enqueue(endpointId, schema, { limit: 100, activityTypes, deadline: deadline() });
    total = {
      scanned: total.scanned + r.scanned,
      queued: total.queued + r.queued,
      switched: total.switched || r.switched,
    };
    if (total.scanned < scanned) await new Promise((res) => setTimeout(res, 50));
  }
  return total;
}

async function queued(schema: string, endpointId: number) {
  const { rows } = await pool.query<{ chain_id: number; vault: string; block_number: string }>(
    `select chain_id, '0x' || encode(vault, 'hex') as vault, block_number from ${schema}.webhook_deliveries
      where endpoint_id = $1 order by id`,
    [endpointId],
  );
  return rows.map((r) => `${r.chain_id}:${r.vault}:${r.block_number}`);
}

describe('webhooks per chain (store)', () => {
  it('filters by vault id or bare address, keeps one queue per (endpoint, chain, vault)', async () => {
    const s = 'wh_chains';
    await migrate(pool, s);
    const store = createWebhookStore(pool, s);
    const add = (vaults: string[] | null) =>
      store.addEndpoint({
        url: 'http://127.0.0.1:9/h',
        secret: 'whsec_x',
        vaults,
        types: null,
        ledgerSchema: s,
      });
    const one = await add([`eip155:31337:${A.toUpperCase().replace('0X', '0x')}`]);
    const bare = await add([A]);
    const all = await add(null);
    expect(one.vaults).toEqual([`eip155:31337:${A}`]);
    expect(bare.vaults).toEqual([A]);
    await expect(add(['eip155:0:0x12'])).rejects.toThrow(/not a vault id/);
    // The same address on two chains with different rows, and another vault.
    await writeLedger(s, [
      { chainId: 31337, vault: A, block: 10 },
      { chainId: 31338, vault: A, block: 500 },
      { chainId: 31338, vault: B, block: 501 },
      { chainId: 31337, vault: A, block: 11 },
      { chainId: 31338, vault: A, block: 502 },
    ]);
    for (const e of [one, bare, all]) expect((await drain(store, e.id, s, 5)).scanned).toBe(5);
    expect(await queued(s, one.id)).toEqual([`31337:${A}:10`, `31337:${A}:11`]);
    expect((await queued(s, bare.id)).sort()).toEqual(
      [`31337:${A}:10`, `31337:${A}:11`, `31338:${A}:500`, `31338:${A}:502`].sort(),
    );
    expect((await queued(s, all.id)).length).toBe(5);
    // Scan order: by chain beside the vault, each (chain, vault) in ledger order.
    expect(await queued(s, all.id)).toEqual([
      `31337:${A}:10`,
      `31337:${A}:11`,
      `31338:${A}:500`,
      `31338:${A}:502`,
      `31338:${B}:501`,
    ]);
    const deliveries = await store.listDeliveries({ endpointId: all.id, limit: 10 });
    expect(new Set(deliveries.map((d) => `${d.chainId}:${d.vault}`))).toEqual(
      new Set([`31337:${A}`, `31338:${A}`, `31338:${B}`]),
    );

    // Heads: the oldest row of each (endpoint, chain, vault): A has two queues to `all`.
    const heads = (await store.dueHeads(100)).filter((d) => d.endpointId === all.id);
    expect(heads.map((d) => `${d.chainId}:${d.vault}`).sort()).toEqual(
      [`31337:${A}`, `31338:${A}`, `31338:${B}`].sort(),
    );
    // A held head on one chain (retried later) holds that chain's queue only.
    const held = heads.find((d) => d.chainId === 31337);
    await store.recordOutcomes([
      {
        id: held!.id,
        state: 'pending',
        status: 503,
        error: null,
        nextAttemptAt: new Date(Date.now() + 60_000),
      },
    ]);
    const after = (await store.dueHeads(100)).filter((d) => d.endpointId === all.id);
    expect(after.map((d) => `${d.chainId}:${d.vault}`).sort()).toEqual([`31338:${A}`, `31338:${B}`]);
    // Every body carries its row's chain, and its webhook-id counts it.
    for (const d of await store.dueHeads(100)) {
      const data = (JSON.parse(d.body) as { data: { chainId: number; vault: string } }).data;
      expect(data.chainId).toBe(d.chainId);
      expect(data.vault).toBe(d.vault);
    }
  });

  it('keeps marks per chain: a rescan after a switch skips what the endpoint reached on that chain only', async () => {
    const live = 'wh_chains_live';
    const build = 'wh_chains_build';
    await migrate(pool, live);
    await migrate(pool, build);
    const store = createWebhookStore(pool, live);
    const e = await store.addEndpoint({
      url: 'http://127.0.0.1:9/h',
      secret: 'whsec_x',
      vaults: null,
      types: null,
      ledgerSchema: live,
    });
    const reached = [
      { chainId: 31337, vault: A, block: 100 },
      { chainId: 31337, vault: A, block: 101 },
    ];
    await writeLedger(live, reached);
    expect((await drain(store, e.id, live, 2)).queued).toBe(2);
    // The build holds the same rows again, and a row of chain 31338's vault A (its chain's live
    // projector was behind: the old ledger never had it), below the address's mark on 31337.
    const cols = 'chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload';
    await pool.query(`insert into ${build}.ledger (${cols}) select ${cols} from ${live}.ledger`);
    await writeLedger(build, [{ chainId: 31338, vault: A, block: 50 }]);
    const r = await drain(store, e.id, build, 3);
    expect(r.switched).toBe(true);
    expect(r.queued).toBe(1);
    expect(await queued(live, e.id)).toEqual([`31337:${A}:100`, `31337:${A}:101`, `31338:${A}:50`]);
    const { rows: marks } = await pool.query<{ m: string }>(
      `select chain_id || ':0x' || encode(vault, 'hex') || ':' || block_number as m
         from ${live}.webhook_vault_marks where endpoint_id = $1 order by chain_id`,
      [e.id],
    );
    expect(marks.map((x) => x.m)).toEqual([`31337:${A}:101`, `31338:${A}:50`]);
  });
});

describe('migration 0029', () => {
  it('gives the webhook rows of a one-chain database their chain, and filters become vault ids', async () => {
    const s = 'wh_chains_up';
    await migrate(pool, s, undefined, { migrations: migrations().filter((m) => m.version <= 28) });
    // Two indexers once wrote this schema: A and C on chain 10 (the schema's chain: most
    // snapshots name it), B on chain 20.
    for (const [vault, chain] of [
      [A, 10],
      [C, 10],
      [B, 20],
    ] as const)
      await pool.query(
        `insert into ${s}.vault_snapshot (vault, chain_id, owner, strategy, status, snapshot, state, last_record_id,
           records_applied, created_at, updated_at) values ($1, $2, '0x', 's', 'active', '{}', '{}', '', 0, 0, 0)`,
        [vault, chain],
      );
    const twoChains = await writeLedger(s, [
      { chainId: 10, vault: A, block: 1 },
      { chainId: 20, vault: B, block: 1 },
    ]);
    const oneChain = await writeLedger(s, [{ chainId: 10, vault: A, block: 2 }]);
    const { rows: eps } = await pool.query<{ id: number }>(
      `insert into ${s}.webhook_endpoints (url, vaults, ledger_schema, cursor_xid, cursor_vault, cursor_block,
         cursor_tx_index, cursor_log_index, cursor_block_hash, cursor_tx_hash, cursor_chain_id)
       values ('http://127.0.0.1:9/a', array[decode($2, 'hex'), decode($3, 'hex'), decode('${'dd'.repeat(20)}', 'hex')],
               $1, $4::xid8, decode($3, 'hex'), 1, 0, 0, decode($6, 'hex'), '\\xff', 20),
              ('http://127.0.0.1:9/b', null, $1, $5::xid8, decode($2, 'hex'), 2, 0, 0, decode($7, 'hex'), '\\xff', 10)
       returning id`,
      [s, A.slice(2), B.slice(2), twoChains, oneChain, hash(1).slice(2), hash(2).slice(2)],
    );
    const [e1, e2] = eps.map((e) => Number(e.id)) as [number, number];
    await pool.query(
      `insert into ${s}.webhook_vault_marks (endpoint_id, vault, block_number, tx_index, log_index)
       values ($1, decode($2, 'hex'), 1, 0, 0), ($1, decode($3, 'hex'), 1, 0, 0)`,
      [e1, A.slice(2), B.slice(2)],
    );
    // The deliveries the old build queued for e1 from the two-chain transaction (ids as it made them).
    const { rows: ledgerRows } = await pool.query<{
      chain_id: number;
      vault: string;
      block_hash: string;
      tx_hash: string;
      block_number: string;
    }>(
      `select chain_id, '0x' || encode(vault, 'hex') as vault, '0x' || encode(block_hash, 'hex') as block_hash,
              '0x' || encode(tx_hash, 'hex') as tx_hash, block_number from ${s}.ledger where commit_xid = $1::xid8`,
      [twoChains],
    );
    for (const l of ledgerRows)
      await pool.query(
        `insert into ${s}.webhook_deliveries (endpoint_id, msg_id, vault, type, block_number, tx_index, log_index, tx_hash, body, deadline)
         values ($1, $2, decode(substr($3, 3), 'hex'), 'deposit', $4, 0, 0, decode(substr($5, 3), 'hex'), $6, now() + interval '1 hour')`,
        [
          e1,
          webhookMessageId(e1, {
            chainId: l.chain_id,
            blockHash: l.block_hash,
            txHash: l.tx_hash,
            logIndex: 0,
            vault: l.vault,
          }),
          l.vault,
          l.block_number,
          l.tx_hash,
          JSON.stringify({ type: 'deposit', data: { chainId: l.chain_id, vault: l.vault } }),
        ],
      );

    await migrate(pool, s);

    const store = createWebhookStore(pool, s);
    const list = await store.listEndpoints();
    expect(list.map((e) => e.vaults)).toEqual([
      [`eip155:10:${A}`, `eip155:20:${B}`, `eip155:10:0x${'dd'.repeat(20)}`],
      null,
    ]);
    const { rows: marks } = await pool.query<{ m: string }>(
      `select chain_id || ':0x' || encode(vault, 'hex') as m from ${s}.webhook_vault_marks order by 1`,
    );
    expect(marks.map((x) => x.m)).toEqual([`10:${A}`, `20:${B}`]);
    const before = await store.listDeliveries({ endpointId: e1, limit: 10 });
    expect(before.map((d) => `${d.chainId}:${d.vault}`).sort()).toEqual([`10:${A}`, `20:${B}`]);
    // e1's cursor was inside a transaction of two chains: back to its start (its rows are not
    // queued twice); e2's, in a transaction of one chain, stands.
    const { rows: cursors } = await pool.query<{ id: number; chain: number; vault: string; xid: string }>(
      `select id, cursor_chain_id as chain, encode(cursor_vault, 'hex') as vault, cursor_xid::text as xid
         from ${s}.webhook_endpoints order by id`,
    );
    expect(cursors.map((c) => [c.chain, c.vault, c.xid])).toEqual([
      [-2147483648, '', twoChains],
      [10, A.slice(2), oneChain],
    ]);
    const r1 = await drain(store, e1, s, 3);
    expect(r1).toMatchObject({ scanned: 3, queued: 1 });
    const q = await queued(s, e1);
    expect(q.slice(0, 2).sort()).toEqual([`10:${A}:1`, `20:${B}:1`]);
    expect(q.slice(2)).toEqual([`10:${A}:2`]);
    const r2 = await store.enqueue(e2, s, { limit: 100, activityTypes, deadline: deadline() });
    expect(r2.scanned).toBe(0);
  });

  it('in a webhooks schema of its own (no projection rows) takes the chain of the ledger its endpoints scan', async () => {
    const hooks = 'wh_chains_hooks';
    await migrate(pool, hooks, undefined, { migrations: migrations().filter((m) => m.version <= 28) });
    const { rows } = await pool.query<{ id: number }>(
      `insert into ${hooks}.webhook_endpoints (url, vaults, ledger_schema, cursor_xid)
       values ('http://127.0.0.1:9/h', array[decode($1, 'hex')], 'wh_chains_up', '0'::xid8) returning id`,
      [C.slice(2)],
    );
    await pool.query(
      `insert into ${hooks}.webhook_vault_marks (endpoint_id, vault, block_number, tx_index, log_index)
       values ($1, decode($2, 'hex'), 1, 0, 0)`,
      [rows[0]?.id, C.slice(2)],
    );
    await migrate(pool, hooks); // no snapshot, ledger row nor checkpoint of its own: not refused
    const { rows: marks } = await pool.query<{ chain_id: number }>(
      `select chain_id from ${hooks}.webhook_vault_marks`,
    );
    expect(marks.map((m) => m.chain_id)).toEqual([10]); // the lowest chain of wh_chains_up's ledger
    expect((await createWebhookStore(pool, hooks).listEndpoints())[0]?.vaults).toEqual([`eip155:10:${C}`]);
  });
});
