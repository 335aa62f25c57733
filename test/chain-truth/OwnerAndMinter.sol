// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IVaultOwned {
    function selectStrategy(bytes32 strategy) external;
}

interface IPoolMint {
    function token0() external view returns (address);
    function token1() external view returns (address);
    function mint(address recipient, int24 tickLower, int24 tickUpper, uint128 amount, bytes calldata data)
        external
        returns (uint256, uint256);
}

interface IERC20Pay {
    function transfer(address to, uint256 amount) external returns (bool);
}

/// A vault's owner that is a contract: in ONE transaction it makes the vault emit an event
/// (StrategySelected) and mints liquidity in the vault's pool, paid from its own balance, for
/// the owners it is told (the vault: a position the vault never opened; itself: not the vault's).
/// Test-only (test/chain-truth/gift-in-tx.test.ts).
contract OwnerAndMinter {
    error NotActivePool();

    address private _active;

    function selectAndMint(
        address vault,
        bytes32 strategy,
        address pool,
        address[] calldata owners,
        int24[] calldata lowers,
        int24[] calldata uppers,
        uint128[] calldata liquidities
    ) external {
        IVaultOwned(vault).selectStrategy(strategy);
        _active = pool;
        for (uint256 i = 0; i < owners.length; i++) {
            IPoolMint(pool).mint(owners[i], lowers[i], uppers[i], liquidities[i], "");
        }
        _active = address(0);
    }

    function uniswapV3MintCallback(uint256 amount0Owed, uint256 amount1Owed, bytes calldata) external {
        if (msg.sender != _active) revert NotActivePool();
        if (amount0Owed > 0) IERC20Pay(IPoolMint(msg.sender).token0()).transfer(msg.sender, amount0Owed);
        if (amount1Owed > 0) IERC20Pay(IPoolMint(msg.sender).token1()).transfer(msg.sender, amount1Owed);
    }
}
