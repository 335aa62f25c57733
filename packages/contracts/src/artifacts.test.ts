import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { artifactsDir, CONTRACTS, compileContracts, publishedArtifact } from '../scripts/compile.js';
import * as contracts from './index.js';

describe('contract artifacts', () => {
  it('the committed artifacts equal a fresh compile of solidity/', () => {
    const fresh = compileContracts();
    for (const [file, content] of Object.entries(fresh)) {
      expect(readFileSync(join(artifactsDir, file), 'utf8'), `${file} is stale: run compile:contracts`).toBe(
        content,
      );
    }
  }, 60_000);

  it('exports an ABI and bytecode for every contract', () => {
    const exported = contracts as Record<string, unknown>;
    for (const name of CONTRACTS) {
      const base = name.charAt(0).toLowerCase() + name.slice(1);
      expect(Array.isArray(exported[`${base}Abi`])).toBe(true);
      expect(exported[`${base}Bytecode`]).toMatch(/^0x[0-9a-f]{100,}$/);
    }
  });

  it('Uniswap v3 core is exported exactly as published in @uniswap/v3-core (not re-compiled)', () => {
    expect(contracts.uniswapV3FactoryBytecode).toBe(publishedArtifact('UniswapV3Factory').bytecode);
    expect(contracts.uniswapV3FactoryAbi).toEqual(publishedArtifact('UniswapV3Factory').abi);
    expect(contracts.uniswapV3PoolAbi).toEqual(publishedArtifact('UniswapV3Pool').abi);
    expect(CONTRACTS).not.toContain('MockPool');
  });

  it('vault events carry exactly the agreed fields (packages/domain payloads.ts)', () => {
    const sig = (abi: readonly { type: string; name?: string; inputs?: readonly { name: string }[] }[]) =>
      Object.fromEntries(
        abi
          .filter((e) => e.type === 'event')
          .map((e) => [e.name, (e.inputs ?? []).map((i) => i.name).join(',')]),
      );
    expect(sig(contracts.vaultFactoryAbi)).toMatchObject({
      VaultCreated: 'vault,owner,strategy,token0,token1,pool,performanceFeeBps',
      DefaultPerformanceFeeSet: 'performanceFeeBps',
    });
    expect(sig(contracts.vaultAbi)).toEqual({
      Deposited: 'from,token,amount',
      Withdrawn: 'to,token,amount',
      PositionOpened: 'positionId,pool,tickLower,tickUpper,liquidity,amount0,amount1',
      PositionResized: 'positionId,liquidity,amount0Delta,amount1Delta',
      PositionRebalanced:
        'positionId,tickLower,tickUpper,liquidity,amount0Out,amount1Out,amount0In,amount1In',
      PositionClosed: 'positionId,amount0,amount1',
      FeesCollected: 'positionId,amount0,amount1',
      RewardsAccrued: 'rewardToken,amount',
      RewardsClaimed: 'rewardToken,amount',
      PerformanceFeeCharged: 'token,amount,recipient',
      Suspended: 'reason',
      Resumed: '',
      ExitRequested: '',
      ExitCompleted: '',
      StrategySelected: 'strategy',
      PerformanceFeeSet: 'performanceFeeBps',
      Swapped: 'tokenIn,amountIn,tokenOut,amountOut',
    });
  });
});
