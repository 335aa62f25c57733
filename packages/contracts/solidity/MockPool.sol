// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IERC20Like {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// @notice Uniswap-v3-shaped pool without a swap engine. The controller moves the price with
/// setPrice (emitting the v3 Swap event); vaults park position tokens here, and the pool pays
/// trading fees and rewards out of an inventory the controller pre-funds. Amounts for liquidity
/// are computed off-chain by the caller (LiquidityAmounts at the current price): the mock trusts
/// them and only checks that a vault never removes more liquidity than it added.
contract MockPool {
    struct Slot0 {
        uint160 sqrtPriceX96;
        int24 tick;
        uint16 observationIndex;
        uint16 observationCardinality;
        uint16 observationCardinalityNext;
        uint8 feeProtocol;
        bool unlocked;
    }

    address public immutable token0;
    address public immutable token1;
    uint24 public immutable fee;
    int24 public immutable tickSpacing;
    address public immutable controller;
    string public venue;

    Slot0 public slot0;
    /// Sum of liquidity the vaults hold here (the mock does not track active ranges).
    uint128 public liquidity;
    mapping(address => uint128) public liquidityOf;
    mapping(address => bool) public isProvider;

    /// Uniswap v3 Swap event. setPrice emits it with amount0 = amount1 = 0.
    event Swap(
        address indexed sender,
        address indexed recipient,
        int256 amount0,
        int256 amount1,
        uint160 sqrtPriceX96,
        uint128 liquidity,
        int24 tick
    );

    error NotController();
    error NotProvider();
    error InsufficientLiquidity();
    error BadTick();

    constructor(
        address token0_,
        address token1_,
        uint24 fee_,
        int24 tickSpacing_,
        string memory venue_,
        uint160 sqrtPriceX96_,
        int24 tick_
    ) {
        token0 = token0_;
        token1 = token1_;
        fee = fee_;
        tickSpacing = tickSpacing_;
        venue = venue_;
        controller = msg.sender;
        _setPrice(sqrtPriceX96_, tick_);
    }

    function setPrice(uint160 sqrtPriceX96, int24 tick) external {
        if (msg.sender != controller) revert NotController();
        _setPrice(sqrtPriceX96, tick);
        emit Swap(msg.sender, msg.sender, 0, 0, sqrtPriceX96, liquidity, tick);
    }

    /// Pulls amounts from the caller (who approved them) and credits it `liq`.
    function addLiquidity(uint128 liq, uint256 amount0, uint256 amount1) external {
        isProvider[msg.sender] = true;
        liquidityOf[msg.sender] += liq;
        liquidity += liq;
        if (amount0 > 0) IERC20Like(token0).transferFrom(msg.sender, address(this), amount0);
        if (amount1 > 0) IERC20Like(token1).transferFrom(msg.sender, address(this), amount1);
    }

    /// Debits `liq` from the caller and pays it the amounts.
    function removeLiquidity(uint128 liq, uint256 amount0, uint256 amount1) external {
        if (liquidityOf[msg.sender] < liq) revert InsufficientLiquidity();
        liquidityOf[msg.sender] -= liq;
        liquidity -= liq;
        _pay(token0, amount0);
        _pay(token1, amount1);
    }

    /// Pays trading fees to a provider.
    function collect(uint256 amount0, uint256 amount1) external {
        if (!isProvider[msg.sender]) revert NotProvider();
        _pay(token0, amount0);
        _pay(token1, amount1);
    }

    /// Pays emissions (the gauge role of a Slipstream-like venue) to a provider.
    function payReward(address token, uint256 amount) external {
        if (!isProvider[msg.sender]) revert NotProvider();
        _pay(token, amount);
    }

    function _pay(address token, uint256 amount) private {
        if (amount > 0) IERC20Like(token).transfer(msg.sender, amount);
    }

    function _setPrice(uint160 sqrtPriceX96, int24 tick) private {
        if (tick < -887272 || tick > 887272) revert BadTick();
        slot0 = Slot0(sqrtPriceX96, tick, 0, 1, 1, 0, true);
    }
}
