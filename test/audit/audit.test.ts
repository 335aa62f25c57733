import { spawn } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { mockAggregatorAbi, uniswapV3PoolAbi, vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  churn,
  type DemoResult,
  deployReferenceStack,
  devChain,
  giftPosition,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
  write,
} from '@vault-yield/devstack/chain';
import type { SnapshotView } from '@vault-yield/domain';
import { insertSnapshots, makeSnapshot, randomAddress, writer } from '@vault-yield/test-kit/reader';
import { encodePacked, keccak256 } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChainPipeline, startChainPipeline } from '../chain-truth/pipeline.js';
import { runCli } from '../cli/run.js';

/**
 * `vault-yield audit` on the real pipeline (anvil → indexer → Kafka → projector → Postgres →
 * reader): the chain values each vault at its served snapshot's block by unwinding it (burn,
 * collect, rewards paid) and the served valueUsd must agree; a tampered projection row is caught
 * and named; a feed answering no price makes the vault "not comparable", not a difference.
 */
describe('vault-yield audit', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let demo: DemoResult;
  let p: ChainPipeline;
  /** bob's vault: an open position with fees owed and pending rewards at its snapshot's block. */
  let bob: `0x${string}`;
  let alice: `0x${string}`;
  /** carol's vault: exited, then given liquidity someone else minted for it (a range it does not list). */
  let carol: `0x${string}`;

  const env = () => ({ RPC_URL: anvil.rpcUrl, READER_URL: p.api.url });
  const snapshot = async (vault: string) =>
    (await p.api.get(`/v1/vault/${vault}/snapshot`)).body as SnapshotView;
  interface JsonRow {
    vault: string;
    block: number;
    servedUsd: string;
    chainUsd: string | null;
    differenceUsd: string | null;
    verdict: string;
    path: string | null;
    unwound: { ranges: number; pendingRewards: string } | null;
    note?: string;
  }
  interface JsonReport {
    ok: boolean;
    maxDifferenceUsd: string;
    paths: string[];
    vaults: JsonRow[];
  }
  const audit = async (args: string[]) => {
    const r = await runCli(['audit', ...args], env(), 120_000);
    return {
      ...r,
      report: args.includes('--json') && r.stdout ? (JSON.parse(r.stdout) as JsonReport) : null,
    };
  };

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    demo = await playDemoScenario(stack);
    bob = demo.vaults.find((v) => v.pool === stack.pools[1]?.address)!.address;
    alice = demo.vaults.find((v) => v.pool === stack.pools[0]?.address)!.address;
    carol = demo.vaults.find((v) => v.pool === stack.pools[2]?.address)!.address;
    // After the demo bob's wide position is open; swaps through it leave fees owed, and rewards
    // accrued after them are pending: the snapshot at that block holds both.
    await churn(stack, stack.pools[1]!, -300);
    await write(stack.clients, stack.accounts.agent, bob, vaultAbi, 'accrueRewards', [7n * 10n ** 18n]);
    await giftPosition(stack, { address: carol, pool: stack.pools[2]! }, 500, { halfWidth: 600 });
    p = await startChainPipeline(anvil, stack, 'audit');
    await p.settle();
  }, 240_000);

  /** The last test stops the indexer (so that it does not follow the reorg it makes). */
  let indexerStopped = false;

  afterAll(async () => {
    if (p && !indexerStopped) await p.stop();
    else if (p) {
      await p.api.stop();
      await p.projector.stop();
      await p.db.drop();
    }
    await anvil?.stop();
  });

  it('clean: every vault within $0.01 of the chain, exit 0 — bob with fees owed and pending rewards among them', async () => {
    const s = await snapshot(bob);
    expect(s.uncollectedFeesUsd).toBeGreaterThan(0.01);
    expect(s.pendingRewardsUsd).toBeGreaterThan(0.01);
    expect(s.positions.length).toBeGreaterThan(0);
    // The pool owes bob's open range fees at the snapshot's block (burn and collect have work to do).
    const [, lowers, uppers] = await stack.clients.publicClient.readContract({
      address: bob,
      abi: vaultAbi,
      functionName: 'livePositions',
      blockNumber: BigInt(s.blockNumber),
    });
    expect(lowers.length).toBe(1);
    const [liquidity] = await stack.clients.publicClient.readContract({
      address: stack.pools[1]!.address,
      abi: uniswapV3PoolAbi,
      functionName: 'positions',
      args: [keccak256(encodePacked(['address', 'int24', 'int24'], [bob, lowers[0]!, uppers[0]!]))],
      blockNumber: BigInt(s.blockNumber),
    });
    expect(liquidity).toBeGreaterThan(0n);

    const r = await audit(['--all', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const report = r.report!;
    expect(report.ok).toBe(true);
    expect(report.paths).toEqual(['eth_simulateV1']);
    expect(report.vaults.map((v) => v.vault).sort()).toEqual(
      demo.vaults.map((v) => v.address.toLowerCase()).sort(),
    );
    for (const v of report.vaults) {
      expect(v.verdict, JSON.stringify(v)).toBe('ok');
      expect(Math.abs(Number(v.differenceUsd))).toBeLessThanOrEqual(0.01);
    }
    const row = report.vaults.find((v) => v.vault === bob.toLowerCase())!;
    expect(row.block).toBe(s.blockNumber);
    expect(row.unwound).toEqual({ ranges: 1, pendingRewards: (7n * 10n ** 18n).toString() });
    // Were fees or rewards left out, the difference would be at least their served value.
    expect(Math.abs(Number(row.differenceUsd))).toBeLessThan(
      Math.min(s.uncollectedFeesUsd, s.pendingRewardsUsd),
    );
    // carol's gifted range is no live position of hers, yet the pool holds it for her: unwound too.
    const gifted = report.vaults.find((v) => v.vault === carol.toLowerCase())!;
    expect(Number(gifted.servedUsd)).toBeGreaterThan(400);
    expect(gifted.unwound).toEqual({ ranges: 1, pendingRewards: '0' });
    console.log(`audit: max difference over ${report.vaults.length} vaults: $${report.maxDifferenceUsd}`);

    // The table: a header, a row per vault, the summary line.
    const text = await audit(['--vaults', '2']);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^vault\s+block\s+served\s+chain\s+difference\s+verdict$/);
    expect(lines).toHaveLength(4);
    expect(lines[3]).toMatch(
      /^2 vault\(s\): 2 compared, max difference \$\d+\.\d{6} \(tolerance \$0\.010000\); none beyond tolerance; path: eth_simulateV1$/,
    );
  });

  it('the override call (a node without eth_simulateV1) finds exactly what the simulation finds', async () => {
    const sim = (await audit(['--all', '--json', '--path', 'simulate'])).report!;
    const call = await audit(['--all', '--json', '--path', 'call']);
    expect(call.code, call.stderr).toBe(0);
    expect(call.report!.paths).toEqual(['eth_call+override']);
    const chain = (r: JsonReport) => Object.fromEntries(r.vaults.map((v) => [v.vault, v.chainUsd]));
    expect(chain(call.report!)).toEqual(chain(sim));
  });

  it('on a node without eth_simulateV1 the override call is used, and the summary says so', async () => {
    const node = await nodeWithout('eth_simulateV1', anvil.rpcUrl);
    try {
      const r = await runCli(
        ['audit', '--all', '--json'],
        { RPC_URL: node.url, READER_URL: p.api.url },
        120_000,
      );
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as JsonReport;
      expect(report.paths).toEqual(['eth_call+override']);
      expect(node.refused()).toBeGreaterThan(0);
      const text = await runCli(
        ['audit', '--vaults', '1'],
        { RPC_URL: node.url, READER_URL: p.api.url },
        120_000,
      );
      expect(text.stdout.trim().split('\n').at(-1)).toMatch(/path: eth_call\+override$/);
    } finally {
      await node.stop();
    }
  });

  it('a tampered projection row is caught and named: exit 1', async () => {
    const db = writer(p.db.writerUrl, p.db.schema);
    try {
      // As the writer (the projector's role) would: +$5 on alice's served value.
      await db.query(
        `update vault_snapshot
            set snapshot = (snapshot::jsonb || jsonb_build_object('valueUsd', (snapshot->>'valueUsd')::numeric + 5))::json
          where vault = $1`,
        [alice.toLowerCase()],
      );
      const r = await audit(['--all']);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      const summary = r.stdout.trim().split('\n').at(-1)!;
      expect(summary).toContain(`beyond tolerance: ${alice.toLowerCase()}`);
      expect(summary).not.toContain(bob.toLowerCase());
      const row = r.stdout.split('\n').find((l) => l.startsWith(alice.toLowerCase()))!;
      expect(row).toMatch(/-5\.000000\s+beyond$/);

      // A tolerance above the tampering lets it pass; one vault alone is audited alone.
      expect((await audit(['--vault', alice, '--tolerance', '6'])).code).toBe(0);
      expect((await audit(['--vault', bob])).code).toBe(0);
    } finally {
      await db.query(
        `update vault_snapshot
            set snapshot = (snapshot::jsonb || jsonb_build_object('valueUsd', (snapshot->>'valueUsd')::numeric - 5))::json
          where vault = $1`,
        [alice.toLowerCase()],
      );
      await db.end();
    }
  });

  it('a vault the reader serves that the chain does not know is not audited, named; the others still are', async () => {
    const db = writer(p.db.writerUrl, p.db.schema);
    const ghost = randomAddress();
    try {
      const head = Number(await stack.clients.publicClient.getBlockNumber());
      await insertSnapshots(db, [makeSnapshot({ vault: ghost, blockNumber: head, valueMicros: 1_000_000 })]);
      const r = await audit(['--all', '--json']);
      expect(r.code, r.stderr).toBe(1);
      const rows = new Map(r.report!.vaults.map((v) => [v.vault, v]));
      expect(rows.get(ghost)?.verdict).toBe('failed');
      expect(rows.get(ghost)?.note).toMatch(/^the node refused a read: /);
      for (const v of demo.vaults) expect(rows.get(v.address.toLowerCase())?.verdict).toBe('ok');
      const text = await audit(['--all']);
      expect(text.stdout.trim().split('\n').at(-1)).toContain(`not audited: ${ghost}`);
    } finally {
      await db.query('delete from vault_snapshot where vault = $1', [ghost]);
      await db.end();
    }
  });

  it('usage errors exit 2; an RPC node that does not answer is one line, exit 1, its password not shown', async () => {
    for (const args of [
      ['--vaults', '0'],
      ['--all', '--vault', alice],
      ['--vault', '0x12'],
      ['--tolerance', 'x'],
    ]) {
      const r = await audit(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    const port = await freePort();
    const r = await runCli(['audit', '--all'], {
      RPC_URL: `http://user:s3cret@127.0.0.1:${port}`,
      READER_URL: p.api.url,
    });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^vault-yield audit: /);
    expect(r.stderr).not.toContain('s3cret');
  });

  it('--every serves vault_yield_audit_difference_usd per vault and stops on SIGTERM', async () => {
    const port = await freePort();
    const bin = fileURLToPath(new URL('../../services/cli/bin/vault-yield.js', import.meta.url));
    const child = spawn(process.execPath, [bin, 'audit', '--all', '--every', '1h'], {
      env: { ...process.env, ...env(), METRICS_PORT: String(port), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    let gone = false;
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => {
        gone = true;
        resolve(code);
      }),
    );
    try {
      // The first run's table is printed after its metrics are recorded.
      while (!/path: /.test(stdout) && !gone) await new Promise((r) => setTimeout(r, 100));
      expect(gone).toBe(false);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      for (const v of demo.vaults)
        expect(metrics).toMatch(
          new RegExp(`vault_yield_audit_difference_usd\\{vault="${v.address.toLowerCase()}"\\} `),
        );
      expect(metrics).toMatch(/vault_yield_audit_runs_total\{outcome="ok"\} 1/);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it('a feed answering no price: the vault is reported not comparable, not a difference', async () => {
    const weth = stack.tokens.weth;
    await write(stack.clients, stack.accounts.deployer, weth.feed, mockAggregatorAbi, 'updateAnswer', [0n]);
    await devChain(anvil.rpcUrl).mine(11);
    await p.settle();
    const s = await snapshot(alice);
    expect(s.stalePrices.map((x) => x.reason)).toContain('invalid');
    const r = await audit(['--vault', alice, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const row = r.report!.vaults[0]!;
    expect(row.verdict).toBe('not-comparable');
    expect(row.note).toContain(`feed ${weth.feed.toLowerCase()}`);
    expect(row.differenceUsd).toBeNull();
  });

  it('a snapshot standing on blocks the chain no longer holds is reported, not compared', async () => {
    const dev = devChain(anvil.rpcUrl);
    const owner = demo.vaults.find((v) => v.address === bob)!.owner;
    const before = await dev.snapshot();
    // A deposit the reader shows (a ledger row in its block), then that block is reorged out
    // under an indexer stopped first, so that nothing reverts it: the projection is left on it.
    await write(stack.clients, owner, bob, vaultAbi, 'deposit', [stack.tokens.usdc.address, 1_000_000n]);
    await p.settle();
    const served = await snapshot(bob);
    indexerStopped = true;
    await p.indexer.stop();
    await dev.revert(before);
    await dev.increaseTime(60);
    await dev.mine(3);
    const r = await audit(['--vault', bob, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const row = r.report!.vaults[0]!;
    expect(row.block).toBe(served.blockNumber);
    expect(row.verdict).toBe('not-comparable');
    expect(row.note).toMatch(/no longer the chain's .*a reorg the projection has not reverted yet/);
    expect(row.differenceUsd).toBeNull();
  });
});

interface RpcRequest {
  id: number | string;
  method: string;
}

/** A JSON-RPC proxy to `upstream` that answers `method` "does not exist" (-32601), as a node without it does. */
async function nodeWithout(method: string, upstream: string) {
  let refused = 0;
  const server = createHttpServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const parsed = JSON.parse(body) as RpcRequest | RpcRequest[];
    const calls = Array.isArray(parsed) ? parsed : [parsed];
    const passed = calls.filter((c) => c.method !== method);
    const answers = new Map<RpcRequest['id'], unknown>();
    for (const c of calls)
      if (c.method === method) {
        refused++;
        answers.set(c.id, {
          jsonrpc: '2.0',
          id: c.id,
          error: { code: -32601, message: `the method ${method} does not exist/is not available` },
        });
      }
    if (passed.length > 0) {
      const up = await fetch(upstream, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(Array.isArray(parsed) ? passed : passed[0]),
      });
      const got = (await up.json()) as { id: RpcRequest['id'] } | { id: RpcRequest['id'] }[];
      for (const a of Array.isArray(got) ? got : [got]) answers.set(a.id, a);
    }
    const out = calls.map((c) => answers.get(c.id));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(Array.isArray(parsed) ? out : out[0]));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    refused: () => refused,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
