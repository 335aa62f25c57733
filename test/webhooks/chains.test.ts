import { webhookMessageId } from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  insertLedger,
  type LedgerSpec,
  randomAddress,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run.js';
import {
  type DeliveredRow,
  type Received,
  rowOf,
  startDeliverer,
  startReceiver,
  TEST_WEBHOOK_KEY,
  waitFor,
} from './support.js';

/**
 * Callbacks when one deployment follows several chains (#45): the same vault address on two
 * chains (the same deployer) with different ledger rows, against real receivers on 127.0.0.1, a
 * real Postgres, the deliverer as its own process and the endpoints made with the CLI. A vault is
 * its chain and address: an endpoint filtered on `eip155:31337:0x…` gets that chain's rows only, a
 * bare address every chain's, `--all` every row; each row carries its chainId, each (chain, vault)
 * is in order and is a queue of its own.
 */
let db: TestDatabase;
let w: Writer;

beforeAll(async () => {
  db = await createTestDatabase('webhooks_chains', { split: true });
  w = writer(db.writerUrl, db.schema);
});

afterAll(async () => {
  await w?.end();
  await db?.drop();
});

const env = (extra: Record<string, string> = {}): Record<string, string> => ({
  DATABASE_URL: db.webhooksUrl,
  WEBHOOK_SECRET_KEY: TEST_WEBHOOK_KEY,
  PROJECTION_SCHEMA: db.schema,
  VIEWS_SCHEMA: 'webhooks_chains_no_views',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_BACKOFF_BASE_MS: '50',
  WEBHOOK_BACKOFF_MAX_MS: '300',
  WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
  ...extra,
});

const cli = (args: string[]) => runCli(['webhooks', ...args], env());

async function add(
  url: string,
  args: string[],
): Promise<{ id: number; secret: string; vaults: string[] | null }> {
  const r = await cli(['add', url, ...args, '--json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as { id: number; secret: string; vaults: string[] | null };
}

/** The rows answered 2xx (first time each), by `chainId:vault`, each list checked in ledger order. */
function byChainVault(received: readonly Received[]): Map<string, DeliveredRow[]> {
  const seen = new Set<string>();
  const out = new Map<string, DeliveredRow[]>();
  for (const r of received) {
    if (r.status !== 200 || seen.has(r.id)) continue;
    seen.add(r.id);
    const row = rowOf(r);
    const key = `${row.chainId}:${row.vault}`;
    out.set(key, [...(out.get(key) ?? []), row]);
  }
  for (const [key, rows] of out) {
    const blocks = rows.map((r) => r.blockNumber);
    expect(blocks, `${key} in order`).toEqual([...blocks].sort((a, b) => a - b));
  }
  return out;
}

const blocks = (rows: readonly DeliveredRow[] | undefined) => rows?.map((r) => r.blockNumber);
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

describe('webhooks across chains', () => {
  it('refuses a malformed vault id at add', async () => {
    for (const bad of ['eip155:x:0x' + '1'.repeat(40), 'eip155:1:0x12', 'cosmos:1:0x' + '1'.repeat(40)]) {
      const r = await cli(['add', 'http://127.0.0.1:9/x', '--vault', bad]);
      expect(r.code, bad).toBe(2);
      expect(r.stderr).toMatch(/expected a vault id eip155:CHAIN:0x… .* or an address 0x…/);
    }
  }, 60_000);

  it('sends each chain its own rows, with its chainId, in order per (chain, vault); a held row holds its own chain only', async () => {
    const V = randomAddress(); // on both chains
    const W = randomAddress(); // on 31338 only
    let heldFixed = false;
    const one = await startReceiver();
    const bare = await startReceiver();
    // The 31337 copy of V: its first row answered 503 (retried, held) until fixed.
    const all = await startReceiver((_req, body) => {
      const row = (JSON.parse(body) as { data: DeliveredRow }).data;
      return !heldFixed && row.chainId === 31337 && row.vault === V && row.blockNumber === 100 ? 503 : 200;
    });
    const epOne = await add(one.url, ['--vault', `eip155:31337:${V.toUpperCase().replace('0X', '0x')}`]);
    const epBare = await add(bare.url, ['--vault', V.toUpperCase().replace('0X', '0x')]);
    const epAll = await add(all.url, ['--all']);
    expect(epOne.vaults).toEqual([`eip155:31337:${V}`]);
    expect(epBare.vaults).toEqual([V]);
    const listed = await cli(['list']);
    expect(listed.stdout).toContain(`vaults eip155:31337:${V}`);

    const run = startDeliverer(
      env({
        WEBHOOK_RETRY_PERIOD_MS: '120000',
        WEBHOOK_BREAKER_FAILURES: '1000000',
        WEBHOOK_BREAKER_FAILING_MS: '0',
      }),
    );
    await run.ready;
    try {
      // Different histories: V on 31337 blocks 100–109 (deposits), V on 31338 blocks 100–114
      // (withdrawals, the same block numbers), W on 31338.
      const specs: LedgerSpec[] = [
        ...range(100, 10).map((b) => ({
          vault: V,
          chainId: 31337,
          type: 'deposit' as const,
          blockNumber: b,
        })),
        ...range(100, 15).map((b) => ({
          vault: V,
          chainId: 31338,
          type: 'withdrawal' as const,
          blockNumber: b,
        })),
        ...range(200, 5).map((b) => ({ vault: W, chainId: 31338, type: 'deposit' as const, blockNumber: b })),
      ];
      for (let i = 0; i < specs.length; i += 6) await insertLedger(w, specs.slice(i, i + 6));

      // While V's first row on 31337 is held, every other queue of the endpoint goes on.
      await waitFor(
        'the rows of the other queues',
        () => all.received.filter((r) => r.status === 200).length >= 20,
      );
      await waitFor('the held row retried', () => all.received.filter((r) => r.status === 503).length >= 2);
      const during = byChainVault(all.received);
      expect(blocks(during.get(`31338:${V}`))).toEqual(range(100, 15));
      expect(blocks(during.get(`31338:${W}`))).toEqual(range(200, 5));
      expect(during.get(`31337:${V}`)).toBeUndefined(); // held behind its first row
      heldFixed = true;

      await waitFor(
        'every row to --all',
        () => new Set(all.received.filter((r) => r.status === 200).map((r) => r.id)).size >= 30,
      );
      await waitFor('every row of V on 31337', () => one.received.length >= 10);
      await waitFor('every row of V on both chains', () => bare.received.length >= 25);
      await new Promise((r) => setTimeout(r, 300)); // nothing more comes

      // --all: every row, each with its chain, each (chain, vault) in order, under ids of its own.
      const gotAll = byChainVault(all.received);
      expect(blocks(gotAll.get(`31337:${V}`))).toEqual(range(100, 10));
      expect(blocks(gotAll.get(`31338:${V}`))).toEqual(range(100, 15));
      expect(gotAll.get(`31337:${V}`)?.every((r) => r.type === 'deposit')).toBe(true);
      expect(gotAll.get(`31338:${V}`)?.every((r) => r.type === 'withdrawal')).toBe(true);
      for (const r of all.received) expect(r.id).toBe(webhookMessageId(epAll.id, rowOf(r)));

      // eip155:31337:V: that chain's rows only.
      expect(one.received).toHaveLength(10);
      const gotOne = byChainVault(one.received);
      expect([...gotOne.keys()]).toEqual([`31337:${V}`]);
      expect(blocks(gotOne.get(`31337:${V}`))).toEqual(range(100, 10));

      // A bare address: V on every chain, not W.
      expect(bare.received).toHaveLength(25);
      const gotBare = byChainVault(bare.received);
      expect([...gotBare.keys()].sort()).toEqual([`31337:${V}`, `31338:${V}`]);

      // The CLI shows each delivery's chain.
      const listedDeliveries = await cli([
        'deliveries',
        '--endpoint',
        String(epAll.id),
        '--limit',
        '100',
        '--json',
      ]);
      const ds = JSON.parse(listedDeliveries.stdout) as { chainId: number; vault: string; state: string }[];
      expect(ds).toHaveLength(30);
      expect(ds.filter((d) => d.chainId === 31337)).toHaveLength(10);
      expect(ds.every((d) => d.state === 'delivered')).toBe(true);
      expect((await cli(['deliveries', '--endpoint', String(epOne.id)])).stdout).toContain(
        `eip155:31337:${V}`,
      );
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
      await one.close();
      await bare.close();
      await all.close();
      for (const e of [epOne, epBare, epAll]) await cli(['remove', String(e.id)]);
    }
  }, 180_000);
});
