import { mockAggregatorAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  createVault,
  deployReferenceStack,
  devChain,
  minedReceipt,
  type ReferenceStack,
  startAnvil,
  toAnswer,
} from '@vault-yield/devstack/chain';
import { encodeFunctionData } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChainClient, createBlockValuator, createChainClient, headGuardOf } from '../index.js';

/**
 * The race the guard closes, on a real anvil: reads of the newest block by its hash while the next
 * block — six hours later, a feed update in it, as the demo scenario's steps — is mined. Unguarded,
 * anvil answers a few of them from the next block's state (the feed's `updatedAt` after the block
 * it was read at: how a live log once held a context the reindexed log did not). Through the
 * block valuator every context must be the block's own.
 */
describe('head guard: reads of the newest block while the next one is mined (anvil)', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let client: ChainClient;

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    client = createChainClient({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, cacheTime: 0 });
  }, 90_000);
  afterAll(async () => {
    await anvil?.stop();
  });

  it("every valued context is the block's own, though the next block is mined during the reads", async () => {
    const pool = stack.pools[0]!;
    const tracked = await createVault(stack, stack.accounts.owners[0]!, pool, 'head-guard');
    const vault = {
      vault: tracked.address,
      token0: pool.token0.address,
      token1: pool.token1.address,
      rewardToken: stack.tokens.rwd.address,
      pool: pool.address,
    };
    const valuator = createBlockValuator(client, { factory: stack.factory, heartbeatOf: () => 3600 });
    const feed = pool.token0.feed;
    const dev = devChain(anvil.rpcUrl);
    const { walletClient, chain } = stack.clients;
    const guard = headGuardOf(client);
    const repeatedBefore = guard.repeated;
    let unguardedLater = 0;
    let valued = 0;
    let answer = toAnswer(pool.token0.usd);
    for (let i = 0; i < 400; i++) {
      const head = await client.getBlock({ blockTag: 'latest' });
      const price = answer;
      const valuations = Array.from({ length: 3 }, () =>
        valuator.read(Number(head.number), [vault], head.hash, Number(head.timestamp)),
      );
      // The same feed read without the guard: how often anvil answers from the next block.
      const raw = Array.from({ length: 3 }, () =>
        client.readContract({
          address: feed,
          abi: mockAggregatorAbi,
          functionName: 'latestRoundData',
          blockHash: head.hash,
        }),
      );
      answer = price + 1_000_000n;
      const mine = (async () => {
        await dev.increaseTime(6 * 3600);
        const hash = await walletClient.sendTransaction({
          account: stack.accounts.deployer,
          chain,
          to: feed,
          data: encodeUpdate(answer),
          gas: 200_000n,
        });
        await minedReceipt(stack.clients.publicClient, hash);
      })();
      const [contexts, rounds] = await Promise.all([Promise.all(valuations), Promise.all(raw), mine]);
      for (const r of rounds) if (r[3] > head.timestamp) unguardedLater++;
      for (const c of contexts) {
        const token = c.get(tracked.address)!.tokens.find((t) => t.address === pool.token0.address)!;
        expect(token.priceUpdatedAt, `block ${head.number}: the feed's time`).toBeLessThanOrEqual(
          Number(head.timestamp),
        );
        expect(
          BigInt(Math.round(Number(token.priceUsd) * 1e8)),
          `block ${head.number}: the feed's answer`,
        ).toBe(price);
        valued++;
      }
    }
    console.info(
      `head guard: ${valued} valuations of the newest block, all its own; ${guard.repeated - repeatedBefore} made again (the head moved during them); unguarded feed reads answered from the next block: ${unguardedLater} of ${3 * 400}`,
    );
    // The reads did race the mining: the guard saw the head move during some of them.
    expect(guard.repeated - repeatedBefore).toBeGreaterThan(0);
  }, 120_000);
});

function encodeUpdate(answer: bigint) {
  return encodeFunctionData({ abi: mockAggregatorAbi, functionName: 'updateAnswer', args: [answer] });
}
