// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IPoolProbe {
    function burn(int24 tickLower, int24 tickUpper, uint128 amount) external returns (uint256, uint256);
    function positions(bytes32 key) external view returns (uint128, uint256, uint256, uint128, uint128);
}

/// Runs in an eth_call with its code overriding a vault's address, so the pool sees the vault as
/// msg.sender: pokes the position's fees (zero-liquidity burn) and returns tokensOwed. Nothing is
/// mined.
contract FeeProbe {
    function owed(address pool, int24 tickLower, int24 tickUpper, bool poke)
        external
        returns (uint128 owed0, uint128 owed1)
    {
        if (poke) IPoolProbe(pool).burn(tickLower, tickUpper, 0);
        (,,, owed0, owed1) = IPoolProbe(pool).positions(keccak256(abi.encodePacked(address(this), tickLower, tickUpper)));
    }

    /// Every range at once: the liquidity the pool holds for the vault there, and what it owes
    /// after a poke (ranges holding liquidity only: the pool refuses to poke an empty position).
    function held(address pool, int24[] calldata lowers, int24[] calldata uppers)
        external
        returns (uint128[] memory liquidity, uint128[] memory owed0, uint128[] memory owed1)
    {
        uint256 n = lowers.length;
        liquidity = new uint128[](n);
        owed0 = new uint128[](n);
        owed1 = new uint128[](n);
        for (uint256 i = 0; i < n; i++) {
            bytes32 key = keccak256(abi.encodePacked(address(this), lowers[i], uppers[i]));
            (uint128 l,,,,) = IPoolProbe(pool).positions(key);
            if (l > 0) IPoolProbe(pool).burn(lowers[i], uppers[i], 0);
            (,,, owed0[i], owed1[i]) = IPoolProbe(pool).positions(key);
            liquidity[i] = l;
        }
    }
}
