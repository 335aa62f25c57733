/**
 * Fees owed to a position at any block, computed by the pool itself without mining anything: an
 * eth_call to the vault's address whose code is overridden by FeeProbe (compiled here with
 * solc-js), which burns 0 liquidity as the vault and reads positions(key).tokensOwed
 * (`feesOwedAt`; `heldAt`: every range of a vault in one call, with the liquidity held there).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';
import {
  type Address,
  decodeFunctionResult,
  encodeFunctionData,
  type Hex,
  type PublicClient,
  parseAbi,
} from 'viem';

const probeAbi = parseAbi([
  'function owed(address pool, int24 tickLower, int24 tickUpper, bool poke) returns (uint128 owed0, uint128 owed1)',
  'function held(address pool, int24[] lowers, int24[] uppers) returns (uint128[] liquidity, uint128[] owed0, uint128[] owed1)',
]);

let runtime: Hex | undefined;

function probeCode(): Hex {
  if (runtime) return runtime;
  const source = readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'FeeProbe.sol'), 'utf8');
  const out = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'FeeProbe.sol': { content: source } },
        settings: {
          evmVersion: 'cancun',
          optimizer: { enabled: true, runs: 200 },
          outputSelection: { '*': { '*': ['evm.deployedBytecode.object'] } },
        },
      }),
    ),
  ) as {
    contracts?: Record<string, Record<string, { evm: { deployedBytecode: { object: string } } }>>;
    errors?: { severity: string; formattedMessage: string }[];
  };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0)
    throw new Error(`FeeProbe did not compile:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  runtime = `0x${out.contracts!['FeeProbe.sol']!.FeeProbe!.evm.deployedBytecode.object}`;
  return runtime;
}

export async function feesOwedAt(
  client: PublicClient,
  vault: Address,
  pool: Address,
  p: { tickLower: number; tickUpper: number; liquidity: bigint },
  blockNumber: bigint,
): Promise<{ fees0: bigint; fees1: bigint }> {
  const { data } = await client.call({
    to: vault,
    data: encodeFunctionData({
      abi: probeAbi,
      functionName: 'owed',
      args: [pool, p.tickLower, p.tickUpper, p.liquidity > 0n],
    }),
    blockNumber,
    stateOverride: [{ address: vault, code: probeCode() }],
  });
  if (!data) throw new Error(`fee probe for ${vault} returned nothing at block ${blockNumber}`);
  const [fees0, fees1] = decodeFunctionResult({ abi: probeAbi, functionName: 'owed', data });
  return { fees0, fees1 };
}

/**
 * What the pool holds for the vault at each range at a block, in one eth_call (FeeProbe.held): the
 * liquidity, and the tokens it owes after a poke (principal burned and not collected + fees).
 */
export async function heldAt(
  client: PublicClient,
  vault: Address,
  pool: Address,
  ranges: readonly { tickLower: number; tickUpper: number }[],
  blockNumber: bigint,
): Promise<{ liquidity: bigint; owed0: bigint; owed1: bigint }[]> {
  if (ranges.length === 0) return [];
  const { data } = await client.call({
    to: vault,
    data: encodeFunctionData({
      abi: probeAbi,
      functionName: 'held',
      args: [pool, ranges.map((r) => r.tickLower), ranges.map((r) => r.tickUpper)],
    }),
    blockNumber,
    stateOverride: [{ address: vault, code: probeCode() }],
  });
  if (!data) throw new Error(`range probe for ${vault} returned nothing at block ${blockNumber}`);
  const [liquidity, owed0, owed1] = decodeFunctionResult({ abi: probeAbi, functionName: 'held', data });
  return ranges.map((_, i) => ({ liquidity: liquidity[i]!, owed0: owed0[i]!, owed1: owed1[i]! }));
}
