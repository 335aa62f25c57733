import { vaultAbi } from '@vault-yield/contracts';
import { payloadSchemas, valuationContext } from '@vault-yield/domain';
import type { Address, Log } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnvilInstance, startAnvil } from '../../../infra/chain/anvil.js';
import { type DemoResult, playDemoScenario } from '../../../infra/chain/scenario/demo.js';
import { deployReferenceStack, type ReferenceStack } from '../../../infra/chain/scenario/deploy.js';
import {
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
} from './index.js';

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
    // The factory events the indexer asks for (VenueSet / GaugeSet are registry-only, not decoded).
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
    expect([...types].sort()).toEqual(
      Object.keys(payloadSchemas)
        .filter((t) => t !== 'mark' && t !== 'revert')
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

  it('decodes market events: FeedSet, Swap, AnswerUpdated', async () => {
    const logs = await client.getLogs({
      address: [stack.factory, ...stack.pools.map((p) => p.address), stack.tokens.weth.feed],
      fromBlock: 0n,
      toBlock: demo.toBlock,
    });
    const kinds = new Set<string>();
    for (const log of logs) {
      const r = decodeLog(log);
      if (r.ok && r.kind === 'valuation') {
        kinds.add(r.event.kind);
        if (r.event.kind === 'answer' && r.event.blockNumber === Number(demo.priceMoves[0]!.blockNumber)) {
          expect(r.event.answer).toBe('324000000000');
        }
      }
    }
    expect([...kinds].sort()).toEqual(['answer', 'feedSet', 'rolesSet', 'swap']);
    expect(eventTopics.vault).toHaveLength(15);
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
    const valuator = createBlockValuator(client, { factory: stack.factory, heartbeatOf: () => 3600 });
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

  it('values every vault alike whether the lens answers for all in one call or one vault per call', async () => {
    const reader = createValuationReader(client, { factory: stack.factory });
    const infos = await Promise.all(demo.vaults.map((v) => reader.vaultInfo(v.address as Address)));
    const whole = createBlockValuator(client, {
      factory: stack.factory,
      heartbeatOf: () => 3600,
      maxReturnBytes: 1 << 20,
    });
    // Room for the tokens and pools and less than one vault: every vault is a batch of its own.
    const single = createBlockValuator(client, {
      factory: stack.factory,
      heartbeatOf: () => 3600,
      maxReturnBytes: 800,
    });
    const block = Number(demo.toBlock);
    const a = await whole.read(block, infos);
    const b = await single.read(block, infos);
    expect(whole.calls).toBe(1);
    expect(single.calls).toBe(infos.length);
    expect(b).toEqual(a);
    expect(a.size).toBe(infos.length);
    // Something to compare: at least one live position with its liquidity.
    const positions = [...a.values()].flatMap((c) => c.holdings.positions);
    expect(positions.length).toBeGreaterThan(0);
    expect(positions.every((p) => BigInt(p.liquidity) >= 0n)).toBe(true);
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
