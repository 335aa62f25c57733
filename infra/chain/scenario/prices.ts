import { mockAggregatorAbi, swapperAbi, uniswapV3PoolAbi } from '@vault-yield/contracts';
import { type Address, encodeFunctionData, type Hash, type Hex } from 'viem';
import { devChain } from '../rpc.js';
import type { ReferenceStack, StackPool, StackToken } from './deploy.js';
import { targetSqrtPrice, toAnswer } from './deploy.js';
import { getSqrtRatioAtTick } from './math.js';
import { receiptOf } from './wallet.js';

/** Gas for one swap: enough to cross every initialized tick the scenarios create. */
const SWAP_GAS = 3_000_000n;

/**
 * Moves a token's USD price consistently: its feed's updateAnswer and a real swap in every pool
 * holding the token (Swapper.swapToPrice to the sqrtPrice of the feeds' ratio) land in the same
 * block, so no block shows a feed that disagrees with the pools. The swaps pay trading fees to
 * the liquidity they cross. Returns that block's number. The chain must be automining.
 */
export async function movePrice(stack: ReferenceStack, token: StackToken, usd: number): Promise<bigint> {
  const c = stack.clients;
  const dev = devChain(stack.rpcUrl);
  const { deployer } = stack.accounts;
  token.usd = usd;
  for (const t of Object.values(stack.tokens)) if (t.address === token.address) t.usd = usd;
  const send = (to: Address, data: Hex, gas: bigint) =>
    c.walletClient.sendTransaction({ to, data, gas, account: deployer, chain: c.chain });

  await dev.setAutomine(false);
  let hashes: Hash[];
  try {
    hashes = [
      await send(
        token.feed,
        encodeFunctionData({ abi: mockAggregatorAbi, functionName: 'updateAnswer', args: [toAnswer(usd)] }),
        200_000n,
      ),
    ];
    for (const p of stack.pools) {
      if (p.token0.address !== token.address && p.token1.address !== token.address) continue;
      hashes.push(await send(stack.swapper, swapToPriceData(p, targetSqrtPrice(p)), SWAP_GAS));
    }
    await dev.mineOne();
  } finally {
    await dev.setAutomine(true);
  }
  const receipts = await Promise.all(hashes.map((h) => receiptOf(c, h)));
  return receipts[0]!.blockNumber;
}

function swapToPriceData(pool: StackPool, sqrtPriceX96: bigint): Hex {
  return encodeFunctionData({
    abi: swapperAbi,
    functionName: 'swapToPrice',
    args: [pool.address, sqrtPriceX96],
  });
}

/**
 * Trading volume without a lasting price move: swaps the pool `ticks` ticks away from its
 * price and back to exactly where it was (two real swaps, two blocks), crossing any range
 * within that distance. Fees accrue to the liquidity in range on both legs.
 */
export async function churn(stack: ReferenceStack, pool: StackPool, ticks: number): Promise<void> {
  const c = stack.clients;
  const { sqrtPriceX96, tick } = await readSlot0(stack, pool.address);
  for (const target of [getSqrtRatioAtTick(tick + ticks), sqrtPriceX96]) {
    const hash = await c.walletClient.sendTransaction({
      to: stack.swapper,
      data: swapToPriceData(pool, target),
      gas: SWAP_GAS,
      account: stack.accounts.deployer,
      chain: c.chain,
    });
    await receiptOf(c, hash);
  }
}

export async function readSlot0(
  stack: ReferenceStack,
  pool: Address,
): Promise<{ sqrtPriceX96: bigint; tick: number }> {
  const s = await stack.clients.publicClient.readContract({
    address: pool,
    abi: uniswapV3PoolAbi,
    functionName: 'slot0',
  });
  return { sqrtPriceX96: s[0], tick: s[1] };
}
