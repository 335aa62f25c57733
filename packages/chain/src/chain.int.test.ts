import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  createVault,
  type DemoResult,
  deployReferenceStack,
  playDemoScenario,
  type ReferenceStack,
  setDefaultFeeRate,
  startAnvil,
} from '@vault-yield/devstack/chain';
import { payloadSchemas, valuationContext } from '@vault-yield/domain';
import { type Address, type Log, toEventSelector } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeLogReference } from './decode/index.js';
import {
  type BlockValuatorConfig,
  type ChainClient,
  type ChainRecord,
  createBlockValuator,
  createChainClient,
  createCountingChainClient,
  createValuationReader,
  decodeLog,
  decodeVaultLog,
  eventTopics,
  getLogsAdaptive,
  getLogsOnce,
  readFactoryInfo,
  readVaultRewardToken,
  readVaultRewardTokens,
  vaultEventsAbi,
} from './index.js';

/**
 * A loopback proxy in front of anvil that plays a node without eth_call state overrides: it drops
 * the override set (`ignores`, as a node that reads only two parameters) or refuses the call
 * (`refuses`, geth's "too many arguments" wording); or a node that takes them but rate-limits the
 * first (`busy once`); or, as a fleet behind one URL mixing both kinds, takes the probe's and drops
 * every later one (`ignores after the probe`).
 */
async function startOverrideFreeProxy(
  upstream: string,
  node: 'ignores' | 'refuses' | 'busy once' | 'ignores after the probe',
) {
  let overrides = 0;
  type Call = { id: unknown; method: string; params?: unknown[] };
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const parsed = JSON.parse(body) as Call | Call[];
    const calls = Array.isArray(parsed) ? parsed : [parsed];
    const refused = new Map<unknown, object>();
    for (const c of calls) {
      if (c.method !== 'eth_call' || (c.params?.length ?? 0) < 3) continue;
      overrides++;
      if (node === 'ignores' || (node === 'ignores after the probe' && overrides > 1))
        c.params = c.params!.slice(0, 2);
      else if (node === 'ignores after the probe') continue;
      else if (node === 'refuses')
        refused.set(c.id, { code: -32602, message: 'too many arguments, want at most 2' });
      // A provider's rate limit (Infura's -32005) on the first call only: then it forwards.
      else if (overrides === 1) refused.set(c.id, { code: -32005, message: 'limit exceeded' });
    }
    const forward = calls.filter((c) => !refused.has(c.id));
    const answered: { id: unknown }[] =
      forward.length === 0
        ? []
        : await (
            await fetch(upstream, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(forward),
            })
          ).json();
    const out = calls.map(
      (c) => answered.find((a) => a.id === c.id) ?? { jsonrpc: '2.0', id: c.id, error: refused.get(c.id) },
    );
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(Array.isArray(parsed) ? out : out[0]));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    overridesSeen: () => overrides,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('chain package against a real anvil', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let demo: DemoResult;
  let client: ChainClient;
  let recordLogs: Log[];

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    demo = await playDemoScenario(stack);
    client = createChainClient({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, cacheTime: 0 });
    const vaults = demo.vaults.map((v) => v.address);
    // The factory events the indexer asks for (VenueSet / GaugeSet / DefaultPerformanceFeeSet are
    // registry-only, not decoded).
    const wanted = new Set<string>([...eventTopics.factory, ...eventTopics.vault]);
    recordLogs = (
      await client.getLogs({
        address: [stack.factory, ...vaults],
        fromBlock: stack.deploymentBlock,
        toBlock: demo.toBlock,
      })
    ).filter((l) => wanted.has(l.topics[0] ?? ''));
  }, 90_000);
  afterAll(async () => {
    await anvil?.stop();
  });

  /** A block valuator of the demo stack (heartbeat 3600 s), through `via` (default: anvil). */
  const valuatorOf = (extra: Partial<BlockValuatorConfig> = {}, via: ChainClient = client) =>
    createBlockValuator(via, { factory: stack.factory, heartbeatOf: () => 3600, ...extra });
  /** The demo's vaults as the valuator takes them. */
  const demoVaults = () => {
    const reader = createValuationReader(client, { factory: stack.factory });
    return Promise.all(demo.vaults.map((v) => reader.vaultInfo(v.address as Address)));
  };
  /** A client of a proxy in front of anvil, without retries (each refusal is seen). */
  const clientOf = (url: string) =>
    createChainClient({ rpcUrl: url, chainId: anvil.chainId, cacheTime: 0, retryCount: 0 });

  it('reads the factory start block', async () => {
    const info = await readFactoryInfo(client, stack.factory);
    expect(info.deploymentBlock).toBe(stack.deploymentBlock);
    expect(info.vaultCount).toBe(3n);
  });

  it('decodes every factory/vault log; each record payload parses with its domain schema', () => {
    const records: ChainRecord[] = [];
    for (const log of recordLogs) {
      const r = decodeLog(log);
      expect(r.ok, JSON.stringify(r)).toBe(true);
      if (r.ok && r.kind === 'record') records.push(r.record);
    }
    const types = new Set(records.map((r) => r.type));
    // mark and revert are the indexer's own; transfer.received and position.received too: a
    // Transfer or Mint log says whether it is one only beside the other logs of its transaction
    // (services/indexer sync/block.ts).
    const indexers = ['mark', 'revert', 'transfer.received', 'position.received'];
    expect([...types].sort()).toEqual(
      Object.keys(payloadSchemas)
        .filter((t) => !indexers.includes(t))
        .sort(),
    );
    for (const r of records) {
      expect(() => payloadSchemas[r.type].parse(r.payload), r.type).not.toThrow();
      expect(r.vault).toMatch(/^0x[0-9a-f]{40}$/);
      expect(r.blockHash).toMatch(/^0x[0-9a-f]{64}$/);
    }
    const created = records.filter((r) => r.type === 'vault.created');
    expect(created.map((r) => r.vault).sort()).toEqual(demo.vaults.map((v) => v.address).sort());
    const strategies = created.map((r) => (r.type === 'vault.created' ? r.payload.strategy : ''));
    expect(strategies.sort()).toEqual(['eth-usdc-narrow', 'eth-usdc-wide', 'usdc-arb-gauge']);
    const suspended = records.find((r) => r.type === 'suspended');
    expect(suspended?.type === 'suspended' && suspended.payload.reason).toMatch(/oracle deviation/);
  });

  it('VaultCreated carries the new vault its rate (a number); PerformanceFeeSet decodes to fee.rate.set', async () => {
    const records = recordLogs.flatMap((l) => {
      const r = decodeVaultLog(l);
      return r.ok ? [r.record] : [];
    });
    // The demo's vaults start at the factory's default (20 %).
    const rates = records.flatMap((r) => (r.type === 'vault.created' ? [r.payload.performanceFeeBps] : []));
    expect(rates).toEqual([2000, 2000, 2000]);
    // The fee collector set bob's vault to 15 %, in the transaction that emitted it.
    const bob = demo.vaults.find((v) => v.strategy === 'eth-usdc-wide')!;
    const set = records.filter((r) => r.type === 'fee.rate.set');
    expect(set).toHaveLength(1);
    expect(set[0]).toMatchObject({ vault: bob.address, payload: { performanceFeeBps: 1500 } });
    const log = recordLogs.find(
      (l) => l.transactionHash === set[0]!.txHash && l.logIndex === set[0]!.logIndex,
    )!;
    expect(log.topics[0]).toBe(toEventSelector(vaultEventsAbi.find((e) => e.name === 'PerformanceFeeSet')!));
    // Both decode alike on the fast path and through viem's generic decoder.
    for (const r of [...set, ...records.filter((x) => x.type === 'vault.created')]) {
      const l = recordLogs.find((x) => x.transactionHash === r.txHash && x.logIndex === r.logIndex)!;
      expect(decodeLogReference(l)).toEqual(decodeLog(l));
    }

    // A default changed before a vault is created is that vault's rate.
    const { owners } = stack.accounts;
    await setDefaultFeeRate(stack, 750);
    try {
      const v = await createVault(stack, owners[3 % owners.length]!, stack.pools[1]!, 'rate-750');
      const logs = await client.getLogs({ address: stack.factory, fromBlock: 'latest', toBlock: 'latest' });
      const created = logs.map((l) => decodeLog(l)).find((r) => r.ok && r.kind === 'record');
      expect(created).toMatchObject({
        ok: true,
        record: {
          type: 'vault.created',
          vault: v.address,
          payload: { strategy: 'rate-750', performanceFeeBps: 750 },
        },
      });
    } finally {
      await setDefaultFeeRate(stack, 2000);
    }
  });

  it('decodes market events: FeedSet, Swap, Mint, AnswerUpdated', async () => {
    const logs = await client.getLogs({
      address: [stack.factory, ...stack.pools.map((p) => p.address), stack.tokens.weth.feed],
      fromBlock: 0n,
      toBlock: demo.toBlock,
    });
    const kinds = new Set<string>();
    for (const log of logs) {
      const r = decodeLog(log);
      if (r.ok && r.kind === 'watched') {
        kinds.add(r.event.kind);
        if (r.event.kind === 'answer' && r.event.blockNumber === Number(demo.priceMoves[0]!.blockNumber)) {
          expect(r.event.answer).toBe('324000000000');
        }
      }
    }
    expect([...kinds].sort()).toEqual(['answer', 'feedSet', 'mint', 'rolesSet', 'swap']);
    // A vault's own mint: owner the vault, sender the vault too (it called the pool), ticks signed.
    const opened = recordLogs
      .map((l) => decodeLog(l))
      .find((r) => r.ok && r.kind === 'record' && r.record.type === 'position.opened');
    const own = opened?.ok && opened.kind === 'record' ? opened.record : undefined;
    expect(own).toBeDefined();
    const mint = logs
      .map((l) => decodeLog(l))
      .find((r) => r.ok && r.kind === 'watched' && r.event.kind === 'mint' && r.event.txHash === own!.txHash);
    const p = own!.payload as { tickLower: number; tickUpper: number; liquidity: string; amount0: string };
    expect(mint?.ok && mint.kind === 'watched' && mint.event).toMatchObject({
      kind: 'mint',
      owner: own!.vault,
      sender: own!.vault,
      tickLower: p.tickLower,
      tickUpper: p.tickUpper,
      liquidity: p.liquidity,
      amount0: p.amount0,
    });
    expect(eventTopics.vault).toHaveLength(17);
    expect(eventTopics.factory).toContain(eventTopics.vaultCreated);
    // A market log is not a vault record.
    const swap = logs.find((l) => l.topics[0] === eventTopics.swap)!;
    expect(decodeVaultLog(swap)).toMatchObject({ ok: false });
  });

  it('reports malformed logs instead of throwing or dropping them', () => {
    const deposit = recordLogs.find(
      (l) => decodeVaultLog(l).ok && l.data.length > 2 && l.topics.length === 3,
    )!;
    const cases: Log[] = [
      { ...deposit, data: deposit.data.slice(0, 20) as `0x${string}` }, // data too short
      { ...deposit, topics: deposit.topics.slice(0, 2) as Log['topics'] }, // an indexed topic missing
      { ...deposit, topics: [`0x${'ab'.repeat(32)}`, ...deposit.topics.slice(1)] as Log['topics'] }, // unknown event
      { ...deposit, topics: [] }, // anonymous
      { ...deposit, blockHash: null, blockNumber: null } as unknown as Log, // pending
      { ...deposit, removed: true },
    ];
    for (const bad of cases) {
      const r = decodeVaultLog(bad);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.reason.length).toBeGreaterThan(5);
        expect(r.log.address).toBe(deposit.address);
      }
    }
  });

  it('reports a log whose payload breaks the schema (non-ASCII strategy)', () => {
    const strategyLog = recordLogs.find((l) => {
      const r = decodeVaultLog(l);
      return r.ok && r.record.type === 'strategy.selected';
    })!;
    const r = decodeVaultLog({ ...strategyLog, data: `0xff${'00'.repeat(31)}` });
    expect(r).toMatchObject({ ok: false });
    expect(!r.ok && r.reason).toMatch(/strategy/);
  });

  it('valuation context reflects the price change between two blocks', async () => {
    const reader = createValuationReader(client, { factory: stack.factory });
    const valuator = valuatorOf();
    const move = demo.priceMoves[0]!.blockNumber;
    const vault = (demo.vaults[0]!.address as Address).toLowerCase() as Address;
    const info = await reader.vaultInfo(vault);
    const read = async (b: bigint) =>
      valuationContext.parse((await valuator.read(Number(b), [info])).get(vault));
    const before = await read(move - 1n);
    const after = await read(move);
    const weth = stack.tokens.weth.address;
    const price = (ctx: typeof before, token: Address) =>
      ctx.tokens.find((t) => t.address === token)?.priceUsd;
    expect(price(before, weth)).toBe('3000');
    expect(price(after, weth)).toBe('3240');
    expect(price(after, stack.tokens.usdc.address)).toBe('1');
    expect(price(after, stack.tokens.rwd.address)).toBe('0.5');
    expect(before.tokens.map((t) => t.symbol).sort()).toEqual(['RWD', 'USDC', 'WETH']);
    expect(after.pools[0]!.tick).not.toBe(before.pools[0]!.tick);
    expect(after.pools[0]).toMatchObject({
      venue: 'uniswap-v3',
      feeTier: 500,
      token0: stack.pools[0]!.token0.address,
    });
    // WETH up in USD moves the raw price token1/token0 up if WETH is token0, else down.
    const up = after.pools[0]!.tick > before.pools[0]!.tick;
    expect(up).toBe(stack.pools[0]!.token0.symbol === 'WETH');
    expect(BigInt(after.pools[0]!.sqrtPriceX96) > BigInt(before.pools[0]!.sqrtPriceX96)).toBe(up);
  });

  it('values every vault alike whether the lens answers for all in one call or one vault per call, as creation code and from a state override', async () => {
    const infos = await demoVaults();
    const block = Number(demo.toBlock);
    const answers = [];
    for (const lens of ['create', 'override'] as const) {
      const whole = valuatorOf({ lens, maxReturnBytes: 1 << 20, maxOverrideBytes: 1 << 20 });
      // Room for the tokens and pools and less than one vault: every vault is a batch of its own.
      const single = valuatorOf({ lens, maxReturnBytes: 800, maxOverrideBytes: 800 });
      const a = await whole.read(block, infos);
      const b = await single.read(block, infos);
      expect(whole.calls).toBe(1);
      expect(single.calls).toBe(infos.length);
      expect(whole.mode).toBe(lens);
      expect(b).toEqual(a);
      expect(a.size).toBe(infos.length);
      answers.push(a);
    }
    expect(answers[1]).toEqual(answers[0]);
    // Something to compare: at least one live position with its liquidity.
    const positions = [...answers[0]!.values()].flatMap((c) => c.holdings.positions);
    expect(positions.length).toBeGreaterThan(0);
    expect(positions.every((p) => BigInt(p.liquidity) >= 0n)).toBe(true);
  });

  it('auto runs the lens from a state override where the node takes one (anvil), with the same answer at every block as creation code', async () => {
    const infos = await demoVaults();
    const told: string[] = [];
    const auto = valuatorOf({ onMode: (m) => told.push(m) });
    const create = valuatorOf({ lens: 'create' });
    expect(auto.mode).toBeUndefined();
    for (const block of [
      demo.priceMoves[0]!.blockNumber,
      demo.priceMoves.at(-1)!.blockNumber,
      demo.toBlock,
    ].map(Number)) {
      expect(await auto.read(block, infos)).toEqual(await create.read(block, infos));
    }
    expect(auto.mode).toBe('override');
    expect(told).toEqual(['override']);
    // The default batch holds ≈ 480 one-position vaults: the three vaults are one call a block.
    expect(auto.calls).toBe(3);
  });

  it('auto falls back to creation code on a node that ignores or refuses state overrides', async () => {
    const infos = await demoVaults();
    const block = Number(demo.toBlock);
    const expected = await valuatorOf({ lens: 'create' }).read(block, infos);
    for (const node of ['ignores', 'refuses'] as const) {
      const proxy = await startOverrideFreeProxy(anvil.rpcUrl, node);
      try {
        const viaProxy = clientOf(proxy.url);
        const told: string[] = [];
        const auto = valuatorOf({ onMode: (m) => told.push(m) }, viaProxy);
        expect(await auto.read(block, infos)).toEqual(expected);
        expect(auto.mode).toBe('create');
        expect(told).toEqual(['create']);
        expect(proxy.overridesSeen()).toBe(1);
      } finally {
        await proxy.close();
      }
    }
  });

  it('a probe the node only rate-limited settles nothing: the read fails (to be retried), the next one probes again', async () => {
    const infos = await demoVaults();
    const block = Number(demo.toBlock);
    const proxy = await startOverrideFreeProxy(anvil.rpcUrl, 'busy once');
    try {
      const viaProxy = clientOf(proxy.url);
      const auto = valuatorOf({}, viaProxy);
      await expect(auto.read(block, infos)).rejects.toThrow(/limit exceeded/i);
      expect(auto.mode).toBeUndefined();
      const expected = await valuatorOf({ lens: 'override' }).read(block, infos);
      expect(await auto.read(block, infos)).toEqual(expected);
      expect(auto.mode).toBe('override');
    } finally {
      await proxy.close();
    }
  });

  it('a node that took the probe but ignores a later override (a mixed fleet) gets creation code from then on, with the same answer', async () => {
    const infos = await demoVaults();
    const blocks = [demo.priceMoves[0]!.blockNumber, demo.toBlock].map(Number);
    const create = valuatorOf({ lens: 'create' });
    const proxy = await startOverrideFreeProxy(anvil.rpcUrl, 'ignores after the probe');
    try {
      const viaProxy = clientOf(proxy.url);
      const told: string[] = [];
      const auto = valuatorOf({ onMode: (m) => told.push(m) }, viaProxy);
      for (const block of blocks)
        expect(await auto.read(block, infos)).toEqual(await create.read(block, infos));
      expect(told).toEqual(['override', 'create']);
      expect(auto.mode).toBe('create');
      // The probe and the one override call the node ignored; none after it.
      expect(proxy.overridesSeen()).toBe(2);
      // Configured override only, the same node's answer is an error, not a fallback.
      const forced = valuatorOf({ lens: 'override' }, viaProxy);
      await expect(forced.read(blocks[0]!, infos)).rejects.toThrow(/ignored the lens' state override/);
      expect(forced.mode).toBe('override');
    } finally {
      await proxy.close();
    }
  });

  it('halves an override batch the node has too little gas for, down to batches that fit', async () => {
    const infos = await demoVaults();
    const rpc = (method: string, params: unknown[]) => client.request({ method, params } as never);
    const limit = (await client.getBlock()).gasLimit;
    // eth_call runs with the block's gas limit: one vault (≈ 150k gas with the tokens and pools)
    // fits, three do not.
    await rpc('evm_setBlockGasLimit', [`0x${(220_000).toString(16)}`]);
    try {
      await rpc('evm_mine', []);
      const head = Number(await client.getBlockNumber());
      const expected = await valuatorOf({ lens: 'override', maxOverrideBytes: 800 }).read(head, infos);
      const halved = valuatorOf({ lens: 'override' });
      expect(await halved.read(head, infos)).toEqual(expected);
      expect(halved.calls).toBeGreaterThan(1);
    } finally {
      await rpc('evm_setBlockGasLimit', [`0x${limit.toString(16)}`]);
      await rpc('evm_mine', []);
    }
  });

  it("reads many vaults' rewardToken in batched multicalls, each at its block, as single reads do", async () => {
    const created = recordLogs
      .map((l) => decodeLog(l))
      .flatMap((r) => (r.ok && r.kind === 'record' && r.record.type === 'vault.created' ? [r.record] : []));
    // Many reads (several multicalls per block), at two blocks per vault, in a shuffled order.
    const reads = Array.from({ length: 900 }, (_, i) => {
      const c = created[i % created.length]!;
      return { vault: c.vault, blockNumber: c.blockNumber + (i % 2) };
    }).reverse();
    const many = await readVaultRewardTokens(client, reads);
    const one = await Promise.all(
      reads.slice(0, 12).map((r) => readVaultRewardToken(client, r.vault, r.blockNumber)),
    );
    expect(many.slice(0, 12)).toEqual(one);
    for (const [i, r] of reads.entries()) {
      const c = created.findIndex((x) => x.vault === r.vault);
      expect(many[i]).toBe(many[reads.findIndex((x) => x.vault === created[c]!.vault)]);
    }
    expect(many.every((t) => /^0x[0-9a-f]{40}$/.test(t))).toBe(true);
    // A read that reverts (an address without the function) fails the whole call.
    await expect(
      readVaultRewardTokens(client, [{ vault: stack.factory, blockNumber: Number(demo.toBlock) }]),
    ).rejects.toThrow();
  });

  it('splits a refused getLogs range into halves and returns every log, in order', async () => {
    const whole = {
      address: [stack.factory, ...demo.vaults.map((v) => v.address as Address)],
      topic0: [...eventTopics.factory, ...eventTopics.vault],
    };
    const from = Number(stack.deploymentBlock);
    const to = Number(demo.toBlock);
    const all = await getLogsOnce(client, whole, from, to);
    // A logs client that refuses answers over 3 KB: the range must be split, maybe several times.
    const { logsClient } = createCountingChainClient({
      rpcUrl: anvil.rpcUrl,
      chainId: anvil.chainId,
      maxLogsResponseBytes: 3000,
    });
    const splits: [number, number][] = [];
    const got = await getLogsAdaptive(logsClient, whole, from, to, {
      onSplit: ({ from: f, to: t }) => splits.push([f, t]),
    });
    expect(splits.length).toBeGreaterThan(0);
    const key = (l: (typeof all)[number]) => `${l.blockNumber}:${l.logIndex}`;
    expect(got.map(key)).toEqual(all.map(key));
    expect(all.length).toBeGreaterThan(10);
  });

  it('vault ABI exposes what the reader uses', () => {
    expect(vaultAbi.some((i) => i.type === 'function' && i.name === 'rewardToken')).toBe(true);
  });
});
