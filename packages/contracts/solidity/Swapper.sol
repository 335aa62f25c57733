// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IERC20S {
    function transfer(address to, uint256 amount) external returns (bool);
}

/// The subset of UniswapV3Pool (v3-core 1.0.1) the swapper calls.
interface IUniswapV3PoolS {
    function token0() external view returns (address);
    function token1() external view returns (address);
    function slot0()
        external
        view
        returns (uint160 sqrtPriceX96, int24 tick, uint16, uint16, uint16, uint8, bool);
    function swap(
        address recipient,
        bool zeroForOne,
        int256 amountSpecified,
        uint160 sqrtPriceLimitX96,
        bytes calldata data
    ) external returns (int256 amount0, int256 amount1);
    function mint(address recipient, int24 tickLower, int24 tickUpper, uint128 amount, bytes calldata data)
        external
        returns (uint256 amount0, uint256 amount1);
}

/// @notice The market of the reference stack: trades against real Uniswap v3 pools and provides
/// their background liquidity. It pays swaps and mints from tokens it HOLDS (the driver mints
/// test tokens to it) and keeps what the pool sends back, so it is its own inventory; nothing is
/// pulled from callers. Anyone may call it (a dev-chain tool, not a product contract).
contract Swapper {
    uint160 internal constant MIN_SQRT_RATIO = 4295128739;
    uint160 internal constant MAX_SQRT_RATIO = 1461446703485210103287273052203988822378723970342;
    /// Exact input large enough that a swap always stops at its price limit.
    int256 internal constant HUGE = int256(uint256(type(uint128).max));

    /// The pool a callback may come from (set only during a call into it).
    address private _active;

    error NotActivePool();

    /// Swaps until the pool's price is exactly sqrtPriceLimitX96 (direction from slot0; no-op
    /// when already there). Returns the pool's deltas (positive = paid in).
    function swapToPrice(address pool, uint160 sqrtPriceLimitX96) external returns (int256 amount0, int256 amount1) {
        (uint160 current,,,,,,) = IUniswapV3PoolS(pool).slot0();
        if (current == sqrtPriceLimitX96) return (0, 0);
        return _swap(pool, sqrtPriceLimitX96 < current, HUGE, sqrtPriceLimitX96);
    }

    /// Sells exactly amountIn of token0 (zeroForOne) or token1, at any price.
    function swapExactIn(address pool, bool zeroForOne, uint256 amountIn)
        external
        returns (int256 amount0, int256 amount1)
    {
        return _swap(pool, zeroForOne, int256(amountIn), zeroForOne ? MIN_SQRT_RATIO + 1 : MAX_SQRT_RATIO - 1);
    }

    /// Adds liquidity owned by the swapper (background depth), paid from its balance.
    function mintLiquidity(address pool, int24 tickLower, int24 tickUpper, uint128 liquidity)
        external
        returns (uint256 amount0, uint256 amount1)
    {
        _active = pool;
        (amount0, amount1) = IUniswapV3PoolS(pool).mint(address(this), tickLower, tickUpper, liquidity, "");
        _active = address(0);
    }

    /// Mints liquidity owned by `recipient` (a gift: a vault's position it did not open), paid
    /// from the swapper's balance.
    function mintFor(address pool, address recipient, int24 tickLower, int24 tickUpper, uint128 liquidity)
        external
        returns (uint256 amount0, uint256 amount1)
    {
        _active = pool;
        (amount0, amount1) = IUniswapV3PoolS(pool).mint(recipient, tickLower, tickUpper, liquidity, "");
        _active = address(0);
    }

    function uniswapV3SwapCallback(int256 amount0Delta, int256 amount1Delta, bytes calldata) external {
        if (msg.sender != _active) revert NotActivePool();
        if (amount0Delta > 0) IERC20S(IUniswapV3PoolS(msg.sender).token0()).transfer(msg.sender, uint256(amount0Delta));
        if (amount1Delta > 0) IERC20S(IUniswapV3PoolS(msg.sender).token1()).transfer(msg.sender, uint256(amount1Delta));
    }

    function uniswapV3MintCallback(uint256 amount0Owed, uint256 amount1Owed, bytes calldata) external {
        if (msg.sender != _active) revert NotActivePool();
        if (amount0Owed > 0) IERC20S(IUniswapV3PoolS(msg.sender).token0()).transfer(msg.sender, amount0Owed);
        if (amount1Owed > 0) IERC20S(IUniswapV3PoolS(msg.sender).token1()).transfer(msg.sender, amount1Owed);
    }

    function _swap(address pool, bool zeroForOne, int256 amountSpecified, uint160 limit)
        private
        returns (int256 amount0, int256 amount1)
    {
        _active = pool;
        (amount0, amount1) = IUniswapV3PoolS(pool).swap(address(this), zeroForOne, amountSpecified, limit, "");
        _active = address(0);
    }
}
