import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnvilInstance, startAnvil } from './anvil.js';
import {
  chainTime,
  type FeedKeeperLogger,
  heartbeatOf,
  keepFeedsFresh,
  readFeedRound,
  roundsDue,
} from './feeds.js';
import { createRpc, devChain } from './rpc.js';
import { type DemoResult, playDemoScenario } from './scenario/demo.js';
import { deployReferenceStack, type ReferenceStack, toAnswer } from './scenario/deploy.js';

const HEARTBEAT = 3600;

describe('feed heartbeats (pure)', () => {
  it('a default and per-feed heartbeats, by address in any case; nonsense refused', () => {
    const f = '0x00000000000000000000000000000000000000aa' as Address;
    const g = '0x00000000000000000000000000000000000000bb' as Address;
    expect(heartbeatOf()(f)).toBe(3600);
    const hb = heartbeatOf({
      heartbeatSeconds: 60,
      heartbeats: { [f.toUpperCase().replace('0X', '0x')]: 86_400 },
    });
    expect(hb(f)).toBe(86_400);
    expect(hb(g)).toBe(60);
    expect(() => heartbeatOf({ heartbeatSeconds: 0 })).toThrow(/heartbeatSeconds/);
    expect(() => heartbeatOf({ heartbeats: { [f]: 1.5 } })).toThrow(/heartbeats/);
  });

  it('a round is due once older than half its heartbeat, strictly', () => {
    const f = '0x00000000000000000000000000000000000000aa' as Address;
    const round = { feed: f, roundId: 1n, answer: 1n, updatedAt: 1000 };
    const hb = () => 3600;
    expect(roundsDue([round], 1000 + 1800, hb)).toEqual([]);
    expect(roundsDue([round], 1000 + 1801, hb)).toEqual([round]);
  });
});

describe('the demo keeps its feeds fresh; keepFeedsFresh keeps them so on a live chain', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let demo: DemoResult;
  let feeds: Address[];
  const rpc = () => createRpc(anvil.rpcUrl);
  const timestampOf = async (n: bigint) =>
    Number(
      BigInt(
        (await rpc().call<{ timestamp: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]))
          .timestamp,
      ),
    );
  const rounds = () => Promise.all(feeds.map((f) => readFeedRound(rpc(), f)));
  const until = async (what: string, cond: () => Promise<boolean>, timeoutMs = 15_000) => {
    const end = Date.now() + timeoutMs;
    while (!(await cond())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    feeds = Object.values(stack.tokens).map((t) => t.feed);
    demo = await playDemoScenario(stack);
  }, 120_000);
  afterAll(async () => {
    await anvil?.stop();
  });

  it('at every block of the demo and at the head, every feed is within its heartbeat of the block time', async () => {
    for (let n = demo.fromBlock; n <= demo.toBlock; n++) {
      const ts = await timestampOf(n);
      for (const f of feeds) {
        const r = await readFeedRound(rpc(), f, n);
        expect(ts - r.updatedAt, `feed ${f} at block ${n}`).toBeLessThanOrEqual(HEARTBEAT);
      }
    }
    const head = await devChain(anvil.rpcUrl).blockNumber();
    const headTs = await timestampOf(head);
    for (const r of await rounds()) expect(headTs - r.updatedAt).toBeLessThanOrEqual(HEARTBEAT);
  }, 120_000);

  it('each step (6 h, past every heartbeat) is followed by one block of new rounds at unchanged prices', async () => {
    // Ten clock steps (60 h: the 216,000 s a feed was stale by before); each refreshes all four feeds in one block.
    expect(demo.feedRefreshes).toHaveLength(10);
    for (const { blockNumber, feeds: refreshed } of demo.feedRefreshes) {
      expect([...refreshed].sort()).toEqual([...feeds].sort());
      const ts = await timestampOf(blockNumber);
      expect(ts - (await timestampOf(blockNumber - 1n))).toBeGreaterThanOrEqual(6 * 3600);
      for (const f of feeds) {
        const before = await readFeedRound(rpc(), f, blockNumber - 1n);
        const after = await readFeedRound(rpc(), f, blockNumber);
        expect(after.answer).toBe(before.answer);
        expect(after.roundId).toBe(before.roundId + 1n);
        expect(after.updatedAt).toBe(ts);
      }
    }
    // The scenario's own figures are the same: its price moves and every event it emits.
    expect(demo.priceMoves.map((m) => [m.token, m.usd])).toEqual([
      ['WETH', 3240],
      ['ARB', 0.864],
      ['WETH', 2950],
      ['ARB', 0.78],
    ]);
    const latest = Object.fromEntries(
      (await rounds()).map((r, i) => [Object.values(stack.tokens)[i]!.symbol, r.answer]),
    );
    expect(latest).toEqual({
      WETH: toAnswer(2950),
      USDC: toAnswer(1),
      ARB: toAnswer(0.78),
      RWD: toAnswer(0.5),
    });
    // No refresh block holds anything but feed rounds: vault events never move into one.
    const refreshBlocks = new Set(demo.feedRefreshes.map((r) => r.blockNumber));
    const logs = await stack.clients.publicClient.getLogs({
      address: [stack.factory, ...demo.vaults.map((v) => v.address)],
      fromBlock: demo.fromBlock,
      toBlock: demo.toBlock,
    });
    expect(logs.filter((l) => refreshBlocks.has(l.blockNumber))).toEqual([]);
  }, 60_000);

  it('keepFeedsFresh: nothing while fresh, a new round at the same answer once past half the heartbeat, nothing after stop()', async () => {
    const dev = devChain(anvil.rpcUrl);
    const logs: Parameters<FeedKeeperLogger>[] = [];
    const keeper = keepFeedsFresh(stack, {
      intervalMs: 30,
      heartbeatSeconds: HEARTBEAT,
      logger: (...a) => logs.push(a),
    });
    try {
      const start = await rounds();
      // Fresh (under half the heartbeat, even after 1000 s more): no round is sent.
      await dev.increaseTime(1000);
      await sleep(300);
      expect((await rounds()).map((r) => r.roundId)).toEqual(start.map((r) => r.roundId));

      await dev.increaseTime(HEARTBEAT / 2);
      const jumped = await chainTime(rpc());
      const logged = () => logs.filter(([, , f]) => f.feed !== undefined).map(([, , f]) => f.feed);
      await until(
        'every feed refreshed and logged',
        async () =>
          (await rounds()).every((r, i) => r.roundId > start[i]!.roundId) && logged().length >= feeds.length,
      );
      const fresh = await rounds();
      for (const [i, r] of fresh.entries()) {
        expect(r.roundId).toBe(start[i]!.roundId + 1n); // once, not at every interval
        expect(r.answer).toBe(start[i]!.answer);
        expect(r.updatedAt).toBeGreaterThanOrEqual(jumped);
      }
      expect(logs.filter(([level]) => level === 'warn')).toEqual([]);
      await sleep(300);
      expect((await rounds()).map((r) => r.roundId)).toEqual(fresh.map((r) => r.roundId));
      expect(logged().sort()).toEqual([...feeds].sort()); // each refresh logged, once
    } finally {
      await keeper.stop();
    }
    await keeper.stop(); // twice is fine
    const stoppedAt = await rounds();
    await dev.increaseTime(HEARTBEAT);
    await sleep(300);
    expect((await rounds()).map((r) => r.roundId)).toEqual(stoppedAt.map((r) => r.roundId));
  }, 60_000);

  it('keepFeedsFresh by URL and feeds: per-feed heartbeats; a bad feed and a throwing logger are logged, never thrown', async () => {
    const dev = devChain(anvil.rpcUrl);
    const [weth, usdc] = [stack.tokens.weth.feed, stack.tokens.usdc.feed];
    const notAFeed = stack.factory;
    const warnings: { message: string; feed?: Address }[] = [];
    const start = await Promise.all([weth, usdc].map((f) => readFeedRound(rpc(), f)));
    const keeper = keepFeedsFresh(
      { rpcUrl: anvil.rpcUrl, feeds: [notAFeed, weth, usdc] },
      {
        intervalMs: 30,
        heartbeatSeconds: HEARTBEAT,
        heartbeats: { [usdc]: 86_400 },
        logger: (level, message, fields) => {
          if (level === 'warn') warnings.push({ message, feed: fields.feed });
          throw new Error('a logger that throws');
        },
      },
    );
    try {
      await dev.increaseTime(HEARTBEAT);
      await until(
        'WETH refreshed',
        async () => (await readFeedRound(rpc(), weth)).roundId > start[0]!.roundId,
      );
      await until('the bad feed warned about twice (the keeper goes on)', async () =>
        Promise.resolve(warnings.filter((w) => w.feed === notAFeed).length >= 2),
      );
      // USDC's heartbeat is a day: an hour is not half of it.
      expect((await readFeedRound(rpc(), usdc)).roundId).toBe(start[1]!.roundId);
      expect(warnings.every((w) => w.feed === notAFeed)).toBe(true);
    } finally {
      await keeper.stop();
    }

    // A node that is gone: warnings, and stop() still resolves.
    const gone: string[] = [];
    const lost = keepFeedsFresh(
      { rpcUrl: 'http://127.0.0.1:9', feeds: [weth] },
      { intervalMs: 20, logger: (level, message) => level === 'warn' && gone.push(message) },
    );
    await until('a warning about the lost node', async () => Promise.resolve(gone.length > 0));
    await lost.stop();
  }, 60_000);

  it('stop() does not wait for a refresh whose block never comes', async () => {
    const dev = devChain(anvil.rpcUrl);
    const weth = stack.tokens.weth.feed;
    const warnings: string[] = [];
    await dev.increaseTime(HEARTBEAT);
    await dev.setAutomine(false);
    try {
      const keeper = keepFeedsFresh(
        { rpcUrl: anvil.rpcUrl, feeds: [weth] },
        { intervalMs: 20, logger: (level, message) => level === 'warn' && warnings.push(message) },
      );
      await until('the refresh sent', async () => (await dev.txpoolStatus()).pending > 0);
      const t0 = Date.now();
      await keeper.stop();
      expect(Date.now() - t0).toBeLessThan(1000);
      expect(warnings).toEqual([]); // stopping is no failure
    } finally {
      await dev.mineOne();
      await dev.setAutomine(true);
    }
  });

  it("a feed with a longer heartbeat (a stablecoin's, 86,400 s) beats only when half of it has passed", async () => {
    const usdc = stack.tokens.usdc.feed;
    const again = await playDemoScenario(stack, { heartbeats: { [usdc]: 86_400 } });
    const withUsdc = again.feedRefreshes.filter((r) => r.feeds.includes(usdc));
    expect(again.feedRefreshes).toHaveLength(10);
    expect(withUsdc.length).toBeGreaterThan(0);
    expect(withUsdc.length).toBeLessThan(10);
    for (let n = again.fromBlock; n <= again.toBlock; n++) {
      const ts = await timestampOf(n);
      const r = await readFeedRound(rpc(), usdc, n);
      expect(ts - r.updatedAt, `USDC at block ${n}`).toBeLessThanOrEqual(86_400);
    }
  }, 120_000);
});
