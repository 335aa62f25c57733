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
 *   per vault:  balanceOf(token) for each of its 3 tokens, pendingRewards, n positions, then
 *               per position: id, tickLower, tickUpper, liquidity, feeGrowthInside0LastX128,
 *               feeGrowthInside1LastX128, tokensOwed0, tokensOwed1, and the lower and upper
 *               ticks' feeGrowthOutside0X128, feeGrowthOutside1X128
 * A vault's positions are its live ones (livePositions, by id), then each of the `extras` ranges
 * the caller names for it that is no live range and that the pool holds something for (liquidity
 * or tokens owed): liquidity minted for the vault by someone else, which the vault does not list.
 * Such a position's id is its key in the pool, keccak256(vault, tickLower, tickUpper), as a
 * uint256. `extras` is flat: per range the vault's index in `vaults`, then tickLower and tickUpper
 * each plus 887272 (MAX_TICK: so every word is unsigned).
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
        uint256[] memory vaultPools,
        uint256[] memory extras
    ) {
        _answer(_read(factory, tokens, pools, vaults, vaultTokens, vaultPools, extras));
    }

    /// The same answer from runtime code (state override): the words, not ABI-encoded.
    function read(
        address factory,
        address[] memory tokens,
        address[] memory pools,
        address[] memory vaults,
        address[] memory vaultTokens,
        uint256[] memory vaultPools,
        uint256[] memory extras
    ) external view {
        _answer(_read(factory, tokens, pools, vaults, vaultTokens, vaultPools, extras));
    }

    /// Ends the call (or the creation) with the words as its raw answer.
    function _answer(uint256[] memory out) private pure {
        assembly {
            return(add(out, 32), mul(mload(out), 32))
        }
    }

    /// Each vault's live positions: ids and ranges (they size the answer), and the extra ranges.
    struct Live {
        uint256[][] ids;
        int24[][] lowers;
        int24[][] uppers;
        uint256[] extras;
    }

    int256 private constant TICK_BIAS = 887272;

    function _read(
        address factory,
        address[] memory tokens,
        address[] memory pools,
        address[] memory vaults,
        address[] memory vaultTokens,
        uint256[] memory vaultPools,
        uint256[] memory extras
    ) private view returns (uint256[] memory out) {
        // Live ranges first: they size the output (extras at most: those found empty are left out).
        Live memory live = Live(
            new uint256[][](vaults.length), new int24[][](vaults.length), new int24[][](vaults.length), extras
        );
        uint256 words = tokens.length * 3 + pools.length * 4 + vaults.length * 5 + (extras.length / 3) * 12;
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
            uint256 countAt = k++;
            k = _positions(ILensPool(pools[vaultPools[i]]), vault, live, i, out, k);
            out[countAt] = (k - countAt - 1) / 12;
        }
        // The words written (extras found empty took none).
        assembly {
            mstore(out, k)
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
        for (uint256 e = 0; e + 2 < live.extras.length; e += 3) {
            if (live.extras[e] != i) continue;
            int24 lo = int24(int256(live.extras[e + 1]) - TICK_BIAS);
            int24 up = int24(int256(live.extras[e + 2]) - TICK_BIAS);
            if (_isLive(live, i, lo, up)) continue;
            k = _extra(pool, vault, lo, up, out, k);
        }
        return k;
    }

    function _isLive(Live memory live, uint256 i, int24 lo, int24 up) private pure returns (bool) {
        for (uint256 p = 0; p < live.ids[i].length; p++) {
            if (live.lowers[i][p] == lo && live.uppers[i][p] == up) return true;
        }
        return false;
    }

    /// An extra range's position, unless the pool holds nothing for it (then no word is written).
    function _extra(ILensPool pool, address vault, int24 lo, int24 up, uint256[] memory out, uint256 k)
        private
        view
        returns (uint256)
    {
        bytes32 key = keccak256(abi.encodePacked(vault, lo, up));
        uint256 at = _position(pool, vault, lo, up, out, k + 3);
        // liquidity, tokensOwed0, tokensOwed1 all zero: nothing held (fees accrue to liquidity only).
        if (out[k + 3] == 0 && out[k + 6] == 0 && out[k + 7] == 0) return k;
        out[k] = uint256(key);
        out[k + 1] = uint256(int256(lo));
        out[k + 2] = uint256(int256(up));
        at = _tick(pool, lo, out, at);
        return _tick(pool, up, out, at);
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
