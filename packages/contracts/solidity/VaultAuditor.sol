// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/*
 * Never deployed. `vault-yield audit` runs it on a node without eth_simulateV1: an eth_call at the
 * snapshot's block with a state override that puts this runtime code AT THE VAULT's address (its
 * storage kept), so that inside it msg.sender to the pool and the gauge is the vault, as when the
 * vault unwinds itself. It shares nothing with VaultLens: no pool state is read and no fee is
 * computed — the pool burns and collects, the gauge pays, and what the vault then holds is read.
 *
 * audit(): for each range, burns the pool's whole liquidity of (vault, lower, upper) if any, then
 * collects everything the pool owes it (principal and fees); the gauge pays the pending rewards;
 * returns each token's balanceOf(vault) and its feed's latestRoundData answer, in the order given.
 * The vault's own code is gone during the call: the caller reads its pool, gauge, reward token,
 * pending rewards and live ranges first (plain calls at the same block) and passes them.
 */

interface IAuditPool {
    function positions(bytes32 key) external view returns (uint128, uint256, uint256, uint128, uint128);
    function burn(int24 tickLower, int24 tickUpper, uint128 amount) external returns (uint256, uint256);
    function collect(address recipient, int24 tickLower, int24 tickUpper, uint128 amount0, uint128 amount1)
        external
        returns (uint128, uint128);
}

interface IAuditGauge {
    function pay(address token, uint256 amount) external;
}

interface IAuditToken {
    function balanceOf(address who) external view returns (uint256);
}

interface IAuditFeed {
    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80);
}

contract VaultAuditor {
    function audit(
        address pool,
        int24[] calldata lowers,
        int24[] calldata uppers,
        address gauge,
        address rewardToken,
        uint256 pendingRewards,
        address[] calldata tokens,
        address[] calldata feeds
    ) external returns (uint256[] memory balances, int256[] memory answers) {
        for (uint256 i = 0; i < lowers.length; i++) {
            _unwind(IAuditPool(pool), lowers[i], uppers[i]);
        }
        if (pendingRewards > 0) IAuditGauge(gauge).pay(rewardToken, pendingRewards);
        balances = new uint256[](tokens.length);
        answers = new int256[](tokens.length);
        for (uint256 i = 0; i < tokens.length; i++) {
            balances[i] = IAuditToken(tokens[i]).balanceOf(address(this));
            (, answers[i],,,) = IAuditFeed(feeds[i]).latestRoundData();
        }
    }

    /// Burns all the pool holds for this range (a closed range holds none: only fees owed), then collects all it owes.
    function _unwind(IAuditPool pool, int24 lower, int24 upper) private {
        (uint128 liquidity,,,,) = pool.positions(keccak256(abi.encodePacked(address(this), lower, upper)));
        if (liquidity > 0) pool.burn(lower, upper, liquidity);
        pool.collect(address(this), lower, upper, type(uint128).max, type(uint128).max);
    }
}
