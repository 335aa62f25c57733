/**
 * Fees owed to a position at any block, computed by the pool itself without mining anything: an
 * eth_call to the vault's address whose code is overridden by FeeProbe (compiled here with
 * solc-js), which burns 0 liquidity as the vault and reads positions(key).tokensOwed.
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
