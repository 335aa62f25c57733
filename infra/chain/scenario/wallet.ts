import {
  type Abi,
  type Account,
  type Address,
  type Chain,
  type ContractFunctionArgs,
  type ContractFunctionName,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hash,
  http,
  type PublicClient,
  type TransactionReceipt,
  WaitForTransactionReceiptTimeoutError,
  type WalletClient,
} from 'viem';

/** Clients for the driver: anvil's unlocked accounts sign (eth_sendTransaction), no local keys. */
export interface DriverClients {
  chain: Chain;
  publicClient: PublicClient;
  walletClient: WalletClient;
  /** anvil's funded default accounts (eth_accounts), lowercase. */
  accounts: Address[];
}

export async function createDriverClients(rpcUrl: string): Promise<DriverClients> {
  const probe = createWalletClient({ transport: http(rpcUrl) });
  const [chainId, accounts] = await Promise.all([probe.getChainId(), probe.getAddresses()]);
  const chain = defineChain({
    id: chainId,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl);
  return {
    chain,
    publicClient: createPublicClient({ chain, transport, cacheTime: 0, pollingInterval: 20 }),
    walletClient: createWalletClient({ chain, transport, pollingInterval: 20 }),
    accounts: accounts.map((a) => a.toLowerCase() as Address),
  };
}

/**
 * A transaction's receipt, on anvil. Automining normally mines a transaction the moment it
 * arrives, but anvil's miner can miss a ready transaction and leave it in the pool with no block
 * to come (foundry-rs/foundry#10122; Aztec's CI met it 34 times in 100,000 runs, and ours twice on
 * a loaded machine: a withdrawal's receipt waited out viem's 3 minutes). So a transaction still
 * pending after a few seconds while automine is on gets a block mined for it (evm_mine takes the
 * pool's ready transactions). With automine off it is the caller's to mine (or the interval
 * miner's). A transaction the node does not know, or one still missing after the last round, fails
 * with the node's own account of it (mining mode, the transaction as the node has it, the pool).
 */
export async function minedReceipt(
  client: PublicClient,
  hash: Hash,
  /**
   * How long a round waits for the receipt, and the rounds before giving up (default 60: three
   * minutes, viem's own wait, for a chain that mines on an interval or by hand).
   */
  { stuckMs = 3_000, rounds = 60 }: { stuckMs?: number; rounds?: number } = {},
): Promise<TransactionReceipt> {
  const rpc = client.request as unknown as (a: { method: string; params: unknown[] }) => Promise<unknown>;
  for (let round = 1; ; round++) {
    try {
      return await client.waitForTransactionReceipt({ hash, pollingInterval: 10, timeout: stuckMs });
    } catch (err) {
      if (!(err instanceof WaitForTransactionReceiptTimeoutError)) throw err;
    }
    const [automine, tx] = await Promise.all([
      rpc({ method: 'anvil_getAutomine', params: [] }).catch(() => null),
      rpc({ method: 'eth_getTransactionByHash', params: [hash] }).catch(() => null),
    ]);
    const pending = tx !== null && (tx as { blockNumber: string | null }).blockNumber === null;
    if (round >= rounds || tx === null) {
      const pool = await rpc({ method: 'txpool_inspect', params: [] }).catch(() => null);
      throw new Error(
        `transaction ${hash} not mined after ${round} × ${stuckMs} ms (automine ${automine}, ` +
          `${tx === null ? 'unknown to the node' : pending ? 'pending' : 'mined'}; txpool: ${JSON.stringify(pool)?.slice(0, 800)})`,
      );
    }
    if (automine === true && pending) await rpc({ method: 'evm_mine', params: [] });
  }
}

/** Waits for a receipt (anvil automines: it is there at once) and throws if the tx reverted. */
export async function receiptOf(c: DriverClients, hash: Hash): Promise<TransactionReceipt> {
  const r = await minedReceipt(c.publicClient, hash);
  if (r.status !== 'success') {
    const trace = await c.publicClient
      .request({
        method: 'debug_traceTransaction' as 'eth_call',
        params: [hash, { tracer: 'callTracer' }] as never,
      })
      .catch(() => null);
    throw new Error(`transaction ${hash} reverted ${JSON.stringify(trace)?.slice(0, 1500)}`);
  }
  return r;
}

export async function deploy(
  c: DriverClients,
  from: Address,
  abi: Abi,
  bytecode: `0x${string}`,
  args: readonly unknown[],
): Promise<Address> {
  const hash = await c.walletClient.deployContract({ abi, bytecode, args, account: from, chain: c.chain });
  const r = await receiptOf(c, hash);
  if (!r.contractAddress) throw new Error(`deployment ${hash} created no contract`);
  return r.contractAddress.toLowerCase() as Address;
}

/**
 * Sends one contract call from an unlocked account and returns its hash without waiting for its
 * block (with automine off it waits in the pool). Gas is estimated (reverts throw decoded) plus a
 * margin: anvil's estimate for Uniswap v3 burns/collects (storage refunds, the 63/64 rule in
 * nested calls) can come out below what the transaction then uses.
 */
export async function send<
  const abi extends Abi,
  fn extends ContractFunctionName<abi, 'nonpayable' | 'payable'>,
>(
  c: DriverClients,
  from: Address | Account,
  address: Address,
  abi: abi,
  functionName: fn,
  args: ContractFunctionArgs<abi, 'nonpayable' | 'payable', fn>,
): Promise<Hash> {
  const request = { address, abi, functionName, args, account: from, chain: c.chain };
  const estimate = await c.publicClient.estimateContractGas(
    request as unknown as Parameters<PublicClient['estimateContractGas']>[0],
  );
  return c.walletClient.writeContract({
    ...request,
    gas: (estimate * 3n) / 2n + 50_000n,
  } as unknown as Parameters<WalletClient['writeContract']>[0]);
}

/** `send`, then its receipt (throws if the transaction reverted). */
export async function write<
  const abi extends Abi,
  fn extends ContractFunctionName<abi, 'nonpayable' | 'payable'>,
>(
  c: DriverClients,
  from: Address | Account,
  address: Address,
  abi: abi,
  functionName: fn,
  args: ContractFunctionArgs<abi, 'nonpayable' | 'payable', fn>,
): Promise<TransactionReceipt> {
  return receiptOf(c, await send(c, from, address, abi, functionName, args));
}
