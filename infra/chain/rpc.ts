/**
 * Plain JSON-RPC over fetch for the dev-chain controls viem does not wrap (anvil_reorg) and for
 * large request batches (the bulk generator posts thousands of calls per HTTP request).
 */
export interface RpcCall {
  method: string;
  params?: unknown[];
}

interface RpcResponse {
  id: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${method}: ${message} (code ${code})`);
  }
}

export interface Rpc {
  url: string;
  call<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** One HTTP request holding every call; results in order. Throws on the first error. */
  batch<T = unknown>(calls: RpcCall[]): Promise<T[]>;
}

/** `timeoutMs`: each HTTP request is aborted after this long (default: none). */
export function createRpc(url: string, opts: { timeoutMs?: number } = {}): Rpc {
  let nextId = 1;
  const post = async (body: unknown): Promise<unknown> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...(opts.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(opts.timeoutMs) }),
    });
    if (!res.ok) throw new Error(`RPC HTTP ${res.status}: ${await res.text()}`);
    return res.json();
  };
  const unwrap = (method: string, r: RpcResponse) => {
    if (r.error) throw new RpcError(method, r.error.code, r.error.message, r.error.data);
    return r.result;
  };
  return {
    url,
    async call<T>(method: string, params: unknown[] = []) {
      const r = (await post({ jsonrpc: '2.0', id: nextId++, method, params })) as RpcResponse;
      return unwrap(method, r) as T;
    },
    async batch<T>(calls: RpcCall[]) {
      if (calls.length === 0) return [];
      const first = nextId;
      nextId += calls.length;
      const body = calls.map((c, i) => ({
        jsonrpc: '2.0',
        id: first + i,
        method: c.method,
        params: c.params ?? [],
      }));
      const out = (await post(body)) as RpcResponse[];
      const byId = new Map(out.map((r) => [r.id, r]));
      return calls.map((c, i) => {
        const r = byId.get(first + i);
        if (!r) throw new Error(`RPC batch: no response for ${c.method} #${i}`);
        return unwrap(c.method, r) as T;
      });
    },
  };
}

const hex = (n: number | bigint) => `0x${n.toString(16)}`;

/** Dev-chain controls (anvil). */
export function devChain(rpcUrl: string) {
  const rpc = createRpc(rpcUrl);
  return {
    rpc,
    blockNumber: async () => BigInt(await rpc.call<string>('eth_blockNumber')),
    /** Mines `blocks` blocks (empty if the pool is empty). */
    mine: (blocks = 1) => rpc.call('anvil_mine', [hex(blocks)]),
    /** Mines one block with whatever fits from the pool. */
    mineOne: () => rpc.call('evm_mine'),
    setAutomine: (on: boolean) => rpc.call('evm_setAutomine', [on]),
    increaseTime: (seconds: number) => rpc.call('evm_increaseTime', [hex(seconds)]),
    setBlockGasLimit: (gas: bigint) => rpc.call('evm_setBlockGasLimit', [hex(gas)]),
    txpoolStatus: async () => {
      const s = await rpc.call<{ pending: string; queued: string }>('txpool_status');
      return { pending: Number(s.pending), queued: Number(s.queued) };
    },
    snapshot: () => rpc.call<string>('evm_snapshot'),
    /** Single-use: a second revert of the same id returns false. */
    revert: (id: string) => rpc.call<boolean>('evm_revert', [id]),
    /**
     * Replaces the last `depth` blocks with `depth` new ones (new hashes), replaying `txs` —
     * `[signedRawTx | txRequest, blockOffset]` pairs — into them. The orphaned blocks' txs are
     * dropped unless passed again.
     */
    reorg: (depth: number, txs: [unknown, number][] = []) => rpc.call('anvil_reorg', [depth, txs]),
    /** Removes the last `depth` blocks (head moves back, no replacement blocks). */
    rollback: (depth: number) => rpc.call('anvil_rollback', [depth]),
  };
}

export type DevChain = ReturnType<typeof devChain>;
