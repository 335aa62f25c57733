import { ensureProjectDatabase, ROLES } from '@vault-yield/devstack/postgres';
import { createPgPool, migrate } from '@vault-yield/store';
import { postgresAdminUrl } from '@vault-yield/test-kit';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { expectNoDdl } from '../postgres/support.js';
import { descendants, dropDevDatabases, newDatabase, startDev, waitExit } from './support.js';

/**
 * `vault-yield dev`, the main job (`npm start`), run as a process the way a developer runs it:
 * it must serve the demo and, on Ctrl-C, stop every part it started and exit — also when the
 * chain under it has died (it once hung there).
 */

afterAll(dropDevDatabases);

describe('vault-yield dev', () => {
  it('serves the demo vault, then stops every part it started on Ctrl-C and exits 0', async () => {
    // A database of a version before the migrator role: the writer owns it and its schemas.
    const database = newDatabase();
    const old = await ensureProjectDatabase(postgresAdminUrl(), database);
    const oldPool = createPgPool({ url: old.writerUrl, applicationName: 'dev-test', max: 1 });
    try {
      await migrate(oldPool, 'vault_yield', ROLES.reader);
    } finally {
      await oldPool.end();
    }
    const dev = startDev(database);
    const url = await dev.ready;
    // The URL is printed as soon as the reader listens; the projector catches up meanwhile.
    let vaults: { vault: string; chainId?: number; id?: string }[] = [];
    for (let i = 0; i < 120 && vaults.length === 0; i++) {
      vaults = (await (await fetch(`${url}/v1/vaults`)).json()) as { vault: string }[];
      if (vaults.length === 0) await new Promise((r) => setTimeout(r, 500));
    }
    expect(vaults.length).toBeGreaterThan(0);
    // The start says what it is doing: the deployment, then each step of the demo.
    expect(dev.out()).toContain('"msg":"deploying the reference contracts');
    for (const n of [1, 10]) expect(dev.out()).toContain(`"step":${n},"of":10,"msg":"demo scenario"`);
    // Two chains, the same deployer: the address is a vault on both, so it is named by its id.
    const v0 = vaults[0]!;
    const ref = v0.id ?? (v0.chainId === undefined ? v0.vault : `eip155:${v0.chainId}:${v0.vault}`);
    const snap = await fetch(`${url}/v1/vault/${ref}/snapshot`);
    expect(snap.status).toBe(200);
    expect(((await snap.json()) as { status: string }).status).toMatch(
      /^(idle|aiming|earning|attention|exiting|suspended)$/,
    );

    // Laid out as deployed (also when it found the old layout): the migrator owns the database
    // and the demo's schemas; the writer, which indexes and projects, may do no DDL.
    const admin = new pg.Client({ connectionString: old.adminDbUrl });
    await admin.connect();
    try {
      const owners = await admin.query<{ name: string; owner: string }>(
        `select d.datname as name, pg_get_userbyid(d.datdba) as owner from pg_database d where d.datname = $1
         union all
         select n.nspname, pg_get_userbyid(n.nspowner) from pg_namespace n where n.nspname in ('vault_yield', 'vault_yield_api')
         union all
         select c.relname, pg_get_userbyid(c.relowner) from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = 'vault_yield' and c.relname in ('ledger', 'vault_snapshot')
         order by 1`,
        [database],
      );
      expect(owners.rows).toEqual(
        [database, 'ledger', 'vault_snapshot', 'vault_yield', 'vault_yield_api']
          .sort()
          .map((name) => ({ name, owner: ROLES.migrator })),
      );
    } finally {
      await admin.end();
    }
    const writer = new pg.Client({ connectionString: old.writerUrl });
    await writer.connect();
    try {
      await expectNoDdl(writer);
      // …and DML on what the migrator made (the projector's rows).
      const n = await writer.query<{ n: number }>('select count(*)::int as n from vault_yield.ledger');
      expect(n.rows[0]?.n).toBeGreaterThan(0);
      // Two local chains (#45), an indexer each on the one topic, the projector folding both: the
      // demo's vaults on both under the same addresses, and one more on the second chain.
      // (The indexers may still be catching up: the reader listens before they have.)
      const indexed = () =>
        writer.query<{ chain_id: number; vaults: string[] }>(
          `select chain_id, array_agg(vault order by vault) as vaults from vault_yield.indexer_vaults
            group by chain_id order by chain_id`,
        );
      /** Both chains indexed: the first's demo vaults, the second has every one of them and one more. */
      const played = Number(/"chainId":31337,"vaults":(\d+)/.exec(dev.out())?.[1]);
      expect(played).toBeGreaterThan(0);
      const both = (rows: { vaults: string[] }[]) =>
        rows.length === 2 &&
        rows[0]!.vaults.length === played &&
        rows[1]!.vaults.length === rows[0]!.vaults.length + 1 &&
        rows[0]!.vaults.every((v) => rows[1]!.vaults.includes(v));
      let chains = await indexed();
      for (let i = 0; i < 240 && !both(chains.rows); i++) {
        await new Promise((r) => setTimeout(r, 500));
        chains = await indexed();
      }
      expect(chains.rows.map((r) => r.chain_id)).toEqual([31337, 31338]);
      const [a, b] = chains.rows.map((r) => r.vaults) as [string[], string[]];
      expect(a).toHaveLength(played);
      expect(b.filter((v) => a.includes(v))).toEqual(a);
      expect(b).toHaveLength(a.length + 1);
      // The projector folds both chains' records (it may still be catching up on one).
      let folded: number[] = [];
      for (let i = 0; i < 240 && folded.length < 2; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 500));
        const q = await writer.query<{ chain_id: number }>(
          'select distinct chain_id from vault_yield.ledger order by chain_id',
        );
        folded = q.rows.map((r) => r.chain_id);
      }
      expect(folded).toEqual([31337, 31338]);
      expect(dev.out()).toMatch(/^chain: +http:\S+ \(anvil, chain id 31337;/m);
      expect(dev.out()).toMatch(/^chain: +http:\S+ \(anvil, chain id 31338;/m);
    } finally {
      await writer.end();
    }

    dev.child.kill('SIGINT');
    expect(await waitExit(dev, 60_000)).toBe(0);
    for (const part of [
      'reader',
      'projector',
      'indexer 31337',
      'indexer 31338',
      'chain 31337',
      'chain 31338',
    ])
      expect(dev.out()).toContain(`"msg":"${part} stopped"`);
    expect(dev.out()).not.toContain('did not stop in time');
  }, 240_000);

  it('exits 0 on Ctrl-C when the chain died under it, stopping every part, instead of hanging', async () => {
    const dev = startDev();
    await dev.ready;
    const anvils = descendants(dev.child.pid as number, 'anvil');
    expect(anvils).toHaveLength(2); // one per demo chain
    process.kill(anvils[1] as number, 'SIGKILL');
    // Interrupt once the indexer has seen the dead chain (it retries, backing off, before it would
    // give up), so the stop has to cut through a retry in progress.
    for (let i = 0; !dev.out().includes('indexing step failed'); i++) {
      if (i >= 600 || dev.child.exitCode !== null)
        throw new Error(`the indexer never reported the dead chain:\n${dev.out().slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(dev.out()).not.toContain('indexer halted');
    dev.child.kill('SIGINT');
    expect(await waitExit(dev, 90_000)).toBe(0);
    for (const part of [
      'reader',
      'projector',
      'indexer 31337',
      'indexer 31338',
      'chain 31337',
      'chain 31338',
    ])
      expect(dev.out()).toContain(`"msg":"${part} stopped"`);
    expect(dev.out()).not.toContain('did not stop in time');
  }, 240_000);
});
