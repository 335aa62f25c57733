import { mockAggregatorAbi, mockPoolAbi } from '@vault-yield/contracts';
import type { Address, Hash, WalletClient } from 'viem';
import { devChain } from '../rpc.js';
import type { ReferenceStack, StackToken } from './deploy.js';
import { toAnswer } from './deploy.js';
import { poolPriceFromUsd } from './math.js';
import { receiptOf } from './wallet.js';

/**
 * Moves a token's USD price consistently: its feed's updateAnswer and every pool's setPrice
 * (tick from the feeds' ratio) land in the same block, so no block shows a feed that disagrees
 * with the pools. Returns that block's number. The chain must be automining.
 */
export async function movePrice(stack: ReferenceStack, token: StackToken, usd: number): Promise<bigint> {
  const c = stack.clients;
  const dev = devChain(stack.rpcUrl);
  const { deployer } = stack.accounts;
  token.usd = usd;
  const { tick, sqrtPriceX96 } = poolPriceFromUsd(
    stack.token0.usd,
    stack.token1.usd,
    stack.token0.decimals,
    stack.token1.decimals,
  );
  const send = (
    address: Address,
    abi: typeof mockAggregatorAbi | typeof mockPoolAbi,
    functionName: string,
    args: unknown[],
  ) =>
    c.walletClient.writeContract({
      address,
      abi,
      functionName,
      args,
      account: deployer,
      chain: c.chain,
      gas: 200_000n,
    } as unknown as Parameters<WalletClient['writeContract']>[0]);

  await dev.setAutomine(false);
  let hashes: Hash[];
  try {
    hashes = [await send(token.feed, mockAggregatorAbi, 'updateAnswer', [toAnswer(usd)])];
    for (const p of stack.pools)
      hashes.push(await send(p.address, mockPoolAbi, 'setPrice', [sqrtPriceX96, tick]));
    await dev.mineOne();
  } finally {
    await dev.setAutomine(true);
  }
  const receipts = await Promise.all(hashes.map((h) => receiptOf(c, h)));
  return receipts[0]!.blockNumber;
}

export async function readSlot0(
  stack: ReferenceStack,
  pool: Address,
): Promise<{ sqrtPriceX96: bigint; tick: number }> {
  const s = await stack.clients.publicClient.readContract({
    address: pool,
    abi: mockPoolAbi,
    functionName: 'slot0',
  });
  return { sqrtPriceX96: s[0], tick: s[1] };
}
