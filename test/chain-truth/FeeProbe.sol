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
}
