// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/*
 * Never deployed. Read in an eth_call at the block to value, one of two ways: its runtime code set
 * at an unused address by a state override (the call's answer is unbounded), or, on a node without
 * state overrides, its creation code sent with no `to`, the constructor returning the answer as if
 * it were runtime code (bounded by the node's code size limit, 24 KiB). Either way it returns what
 * the chain holds for many vaults as one flat word array. One round trip and one EVM frame for what a multicall needs thousands of ABI-coded
 * sub-calls for; inputs that are themselves chain state (a token's feed, a vault's live ranges)
 * are read in the same frame, so the answer never depends on what the caller saw before.
 *
 * Output (32-byte words, in this order):
 *   per token:  feed, answer (int256), updatedAt
 *   per pool:   sqrtPriceX96, tick (int256), feeGrowthGlobal0X128, feeGrowthGlobal1X128
 *   per vault:  balanceOf(token) for each of its 3 tokens, pendingRewards, n live positions, then
 *               per position: id, tickLower, tickUpper, liquidity, feeGrowthInside0LastX128,
 *               feeGrowthInside1LastX128, tokensOwed0, tokensOwed1, and the lower and upper
 *               ticks' feeGrowthOutside0X128, feeGrowthOutside1X128
 * Callers batch vaults: by the code size limit (creation code) or the node's gas cap (override).
 */

interface ILensFactory {
    function feedOf(address token) external view returns (address);
}

interface ILensFeed {
    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80);
}

interface ILensPool {
    function slot0() external view returns (uint160, int24, uint16, uint16, uint16, uint8, bool);
    function feeGrowthGlobal0X128() external view returns (uint256);
    function feeGrowthGlobal1X128() external view returns (uint256);
    function positions(bytes32 key) external view returns (uint128, uint256, uint256, uint128, uint128);
    function ticks(int24 tick)
        external
        view
        returns (uint128, int128, uint256, uint256, int56, uint160, uint32, bool);
}

interface ILensVault {
    function pendingRewards() external view returns (uint256);
    function livePositions() external view returns (uint256[] memory, int24[] memory, int24[] memory);
}

interface ILensToken {
    function balanceOf(address who) external view returns (uint256);
}

contract VaultLens {
    error NoFeed(address token);

    /// `vaultTokens` holds 3 tokens per vault (token0, token1, reward token), `vaultPools` the index
    /// into `pools` of each vault's pool.
    constructor(
        address factory,
        address[] memory tokens,
        address[] memory pools,
        address[] memory vaults,
        address[] memory vaultTokens,
        uint256[] memory vaultPools
    ) {
        _answer(_read(factory, tokens, pools, vaults, vaultTokens, vaultPools));
    }

    /// The same answer from runtime code (state override): the words, not ABI-encoded.
    function read(
        address factory,
        address[] memory tokens,
        address[] memory pools,
        address[] memory vaults,
        address[] memory vaultTokens,
        uint256[] memory vaultPools
    ) external view {
        _answer(_read(factory, tokens, pools, vaults, vaultTokens, vaultPools));
    }

    /// Ends the call (or the creation) with the words as its raw answer.
    function _answer(uint256[] memory out) private pure {
        assembly {
            return(add(out, 32), mul(mload(out), 32))
        }
    }

    /// Each vault's live positions: ids and ranges (they size the answer).
    struct Live {
        uint256[][] ids;
        int24[][] lowers;
        int24[][] uppers;
    }

    function _read(
        address factory,
        address[] memory tokens,
        address[] memory pools,
        address[] memory vaults,
        address[] memory vaultTokens,
        uint256[] memory vaultPools
    ) private view returns (uint256[] memory out) {
        // Live ranges first: they size the output.
        Live memory live = Live(
            new uint256[][](vaults.length), new int24[][](vaults.length), new int24[][](vaults.length)
        );
        uint256 words = tokens.length * 3 + pools.length * 4 + vaults.length * 5;
        for (uint256 i = 0; i < vaults.length; i++) {
            (live.ids[i], live.lowers[i], live.uppers[i]) = ILensVault(vaults[i]).livePositions();
            words += live.ids[i].length * 12;
        }
        out = new uint256[](words);
        uint256 k;
        for (uint256 i = 0; i < tokens.length; i++) {
            address feed = ILensFactory(factory).feedOf(tokens[i]);
            if (feed == address(0)) revert NoFeed(tokens[i]);
            (, int256 answer,, uint256 updatedAt,) = ILensFeed(feed).latestRoundData();
            out[k++] = uint256(uint160(feed));
            out[k++] = uint256(answer);
            out[k++] = updatedAt;
        }
        for (uint256 i = 0; i < pools.length; i++) {
            ILensPool pool = ILensPool(pools[i]);
            (uint160 sqrtPriceX96, int24 tick,,,,,) = pool.slot0();
            out[k++] = sqrtPriceX96;
            out[k++] = uint256(int256(tick));
            out[k++] = pool.feeGrowthGlobal0X128();
            out[k++] = pool.feeGrowthGlobal1X128();
        }
        for (uint256 i = 0; i < vaults.length; i++) {
            address vault = vaults[i];
            for (uint256 j = 0; j < 3; j++) {
                out[k++] = ILensToken(vaultTokens[i * 3 + j]).balanceOf(vault);
            }
            out[k++] = ILensVault(vault).pendingRewards();
            out[k++] = live.ids[i].length;
            k = _positions(ILensPool(pools[vaultPools[i]]), vault, live, i, out, k);
        }
    }

    function _positions(ILensPool pool, address vault, Live memory live, uint256 i, uint256[] memory out, uint256 k)
        private
        view
        returns (uint256)
    {
        for (uint256 p = 0; p < live.ids[i].length; p++) {
            int24 lo = live.lowers[i][p];
            int24 up = live.uppers[i][p];
            out[k++] = live.ids[i][p];
            out[k++] = uint256(int256(lo));
            out[k++] = uint256(int256(up));
            k = _position(pool, vault, lo, up, out, k);
            k = _tick(pool, lo, out, k);
            k = _tick(pool, up, out, k);
        }
        return k;
    }

    function _position(ILensPool pool, address owner, int24 lo, int24 up, uint256[] memory out, uint256 k)
        private
        view
        returns (uint256)
    {
        (uint128 liquidity, uint256 in0, uint256 in1, uint128 owed0, uint128 owed1) =
            pool.positions(keccak256(abi.encodePacked(owner, lo, up)));
        out[k++] = liquidity;
        out[k++] = in0;
        out[k++] = in1;
        out[k++] = owed0;
        out[k++] = owed1;
        return k;
    }

    function _tick(ILensPool pool, int24 tick, uint256[] memory out, uint256 k) private view returns (uint256) {
        (,, uint256 outside0, uint256 outside1,,,,) = pool.ticks(tick);
        out[k++] = outside0;
        out[k++] = outside1;
        return k;
    }
}
