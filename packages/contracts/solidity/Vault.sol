// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IERC20V {
    function balanceOf(address who) external view returns (uint256);
    function approve(address spender, uint256 amount) external returns (bool);
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// The subset of UniswapV3Pool (v3-core 1.0.1) the vault calls.
interface IUniswapV3PoolV {
    function tickSpacing() external view returns (int24);
    function mint(address recipient, int24 tickLower, int24 tickUpper, uint128 amount, bytes calldata data)
        external
        returns (uint256 amount0, uint256 amount1);
    function burn(int24 tickLower, int24 tickUpper, uint128 amount) external returns (uint256 amount0, uint256 amount1);
    function collect(
        address recipient,
        int24 tickLower,
        int24 tickUpper,
        uint128 amount0Requested,
        uint128 amount1Requested
    ) external returns (uint128 amount0, uint128 amount1);
    function swap(
        address recipient,
        bool zeroForOne,
        int256 amountSpecified,
        uint160 sqrtPriceLimitX96,
        bytes calldata data
    ) external returns (int256 amount0, int256 amount1);
}

interface IRewardsGauge {
    function pay(address token, uint256 amount) external;
}

// A performance-fee rate is basis points of the gain: 10000 takes all of it, more would take capital.
uint16 constant MAX_PERFORMANCE_FEE_BPS = 10_000;

interface IFactoryRoles {
    function guardian() external view returns (address);
    function feeCollector() external view returns (address);
}

/// @notice An agent-managed liquidity vault holding its positions directly in one Uniswap v3 pool
/// (the vault is the pool position's owner). Roles: the owner (deposits, withdrawals, strategy,
/// exit requests), the agent (positions, fees, rewards, exit completion), the factory's guardian
/// (suspend/resume) and the factory's fee collector (performance fee and its rate). While suspended,
/// withdrawals and unwinding (close, collect, claim, exit) stay available.
/// The pool computes every amount: mints are paid from the vault's idle balance in
/// uniswapV3MintCallback, burns return principal to idle (fees stay owed in the pool until
/// collectFees or a rebalance collects them). Two live positions never share a range, since the
/// pool keys positions by (owner, tickLower, tickUpper).
contract Vault {
    struct Position {
        int24 tickLower;
        int24 tickUpper;
        uint128 liquidity;
        bool exists;
        /// Open, or closed with fees not yet collected.
        bool live;
    }

    address public immutable factory;
    address public immutable owner;
    address public immutable agent;
    address public immutable token0;
    address public immutable token1;
    address public immutable pool;
    address public immutable rewardToken;
    address public immutable gauge;

    bytes32 public strategy;
    bool public suspended;
    bool public exitRequested;
    uint256 public pendingRewards;
    uint256 public nextPositionId = 1;
    uint256 public openPositions;
    mapping(uint256 => Position) public positions;
    /// Basis points of the gain the fee collector charges. The contract takes amounts, not rates,
    /// but the service settles each charge's high-water mark at the rate in force when it was
    /// made: the rate lives here (VaultCreated, PerformanceFeeSet) so that it is chain truth, not a
    /// constant of the service.
    uint16 public performanceFeeBps;

    event Deposited(address indexed from, address indexed token, uint256 amount);
    event Withdrawn(address indexed to, address indexed token, uint256 amount);
    event PositionOpened(
        uint256 indexed positionId,
        address indexed pool,
        int24 tickLower,
        int24 tickUpper,
        uint128 liquidity,
        uint256 amount0,
        uint256 amount1
    );
    /// liquidity is the new total; a positive delta moved idle → position, a negative one back.
    event PositionResized(uint256 indexed positionId, uint128 liquidity, int256 amount0Delta, int256 amount1Delta);
    event PositionRebalanced(
        uint256 indexed positionId,
        int24 tickLower,
        int24 tickUpper,
        uint128 liquidity,
        uint256 amount0Out,
        uint256 amount1Out,
        uint256 amount0In,
        uint256 amount1In
    );
    event PositionClosed(uint256 indexed positionId, uint256 amount0, uint256 amount1);
    event FeesCollected(uint256 indexed positionId, uint256 amount0, uint256 amount1);
    event RewardsAccrued(address indexed rewardToken, uint256 amount);
    event RewardsClaimed(address indexed rewardToken, uint256 amount);
    event PerformanceFeeCharged(address indexed token, uint256 amount, address indexed recipient);
    event Suspended(string reason);
    event Resumed();
    event ExitRequested();
    event ExitCompleted();
    event StrategySelected(bytes32 strategy);
    event PerformanceFeeSet(uint16 performanceFeeBps);
    event Swapped(address indexed tokenIn, uint256 amountIn, address indexed tokenOut, uint256 amountOut);

    error NotOwner();
    error NotAgent();
    error NotGuardian();
    error NotFeeCollector();
    error NotPool();
    error IsSuspended();
    error NotSuspended();
    error ExitPending();
    error NoExitRequested();
    error PositionsStillOpen();
    error UnknownToken();
    error UnknownPosition();
    error PositionClosedAlready();
    error RangeInUse();
    error InsufficientIdle();
    error InsufficientPending();
    error BadRange();
    error BadAmount();
    error BadReason();
    error EmptyStrategy();
    error FeeTooHigh();

    /// No event for the initial rate: the factory's VaultCreated carries it.
    constructor(
        address owner_,
        address agent_,
        bytes32 strategy_,
        address token0_,
        address token1_,
        address pool_,
        address rewardToken_,
        address gauge_,
        uint16 performanceFeeBps_
    ) {
        factory = msg.sender;
        owner = owner_;
        agent = agent_;
        strategy = strategy_;
        token0 = token0_;
        token1 = token1_;
        pool = pool_;
        rewardToken = rewardToken_;
        gauge = gauge_;
        performanceFeeBps = performanceFeeBps_;
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    modifier onlyAgent() {
        if (msg.sender != agent) revert NotAgent();
        _;
    }

    modifier active() {
        if (suspended) revert IsSuspended();
        _;
    }

    // ---- owner ----

    function deposit(address token, uint256 amount) external onlyOwner active {
        if (token != token0 && token != token1) revert UnknownToken();
        if (exitRequested) revert ExitPending();
        if (amount == 0) revert BadAmount();
        IERC20V(token).transferFrom(msg.sender, address(this), amount);
        emit Deposited(msg.sender, token, amount);
    }

    /// Allowed while suspended: exits stay available. Checks the real balance, so tokens sent
    /// to the vault by a plain transfer are withdrawable too.
    function withdraw(address token, uint256 amount) external onlyOwner {
        _withdraw(token, amount);
    }

    function selectStrategy(bytes32 strategy_) external onlyOwner active {
        if (strategy_ == bytes32(0)) revert EmptyStrategy();
        strategy = strategy_;
        emit StrategySelected(strategy_);
    }

    /// Allowed while suspended.
    function requestExit() external onlyOwner {
        if (exitRequested) revert ExitPending();
        exitRequested = true;
        emit ExitRequested();
    }

    // ---- agent ----

    /// Mints `liquidity` in [tickLower, tickUpper); the pool takes what that costs at its price.
    function openPosition(int24 tickLower, int24 tickUpper, uint128 liquidity)
        external
        onlyAgent
        active
        returns (uint256 positionId)
    {
        if (exitRequested) revert ExitPending();
        _checkRange(tickLower, tickUpper);
        if (liquidity == 0) revert BadAmount();
        positionId = nextPositionId++;
        _checkRangeFree(positionId, tickLower, tickUpper);
        positions[positionId] = Position(tickLower, tickUpper, liquidity, true, true);
        openPositions += 1;
        (uint256 amount0, uint256 amount1) = _mint(tickLower, tickUpper, liquidity);
        emit PositionOpened(positionId, pool, tickLower, tickUpper, liquidity, amount0, amount1);
    }

    /// Up: mints the difference (deltas ≥ 0, paid from idle). Down: burns the difference and
    /// collects exactly the burned principal (deltas ≤ 0); fees stay owed in the pool.
    function resizePosition(uint256 positionId, uint128 liquidity) external onlyAgent active {
        Position storage p = _open(positionId);
        if (liquidity == 0 || liquidity == p.liquidity) revert BadAmount();
        int256 d0;
        int256 d1;
        if (liquidity > p.liquidity) {
            (uint256 a0, uint256 a1) = _mint(p.tickLower, p.tickUpper, liquidity - p.liquidity);
            (d0, d1) = (int256(a0), int256(a1));
        } else {
            (uint256 a0, uint256 a1) = _burnPrincipal(p.tickLower, p.tickUpper, p.liquidity - liquidity);
            (d0, d1) = (-int256(a0), -int256(a1));
        }
        p.liquidity = liquidity;
        emit PositionResized(positionId, liquidity, d0, d1);
    }

    /// Burns the whole old range and collects everything owed on it (principal + fees: the fee
    /// part is emitted as FeesCollected first), then mints the new range from idle.
    function rebalancePosition(uint256 positionId, int24 tickLower, int24 tickUpper, uint128 liquidity)
        external
        onlyAgent
        active
    {
        Position storage p = _open(positionId);
        _checkRange(tickLower, tickUpper);
        if (liquidity == 0) revert BadAmount();
        _checkRangeFree(positionId, tickLower, tickUpper);
        (uint256 out0, uint256 out1) = IUniswapV3PoolV(pool).burn(p.tickLower, p.tickUpper, p.liquidity);
        (uint128 got0, uint128 got1) = IUniswapV3PoolV(pool).collect(
            address(this), p.tickLower, p.tickUpper, type(uint128).max, type(uint128).max
        );
        if (got0 > out0 || got1 > out1) emit FeesCollected(positionId, got0 - out0, got1 - out1);
        p.tickLower = tickLower;
        p.tickUpper = tickUpper;
        p.liquidity = liquidity;
        (uint256 in0, uint256 in1) = _mint(tickLower, tickUpper, liquidity);
        emit PositionRebalanced(positionId, tickLower, tickUpper, liquidity, out0, out1, in0, in1);
    }

    /// Burns all liquidity and collects exactly the principal; fees stay owed in the pool and
    /// the position stays live until collectFees. Allowed while suspended.
    function closePosition(uint256 positionId) external onlyAgent {
        Position storage p = _open(positionId);
        (uint256 a0, uint256 a1) = _burnPrincipal(p.tickLower, p.tickUpper, p.liquidity);
        p.liquidity = 0;
        openPositions -= 1;
        emit PositionClosed(positionId, a0, a1);
    }

    /// Collects every fee the pool owes the position (a zero-liquidity burn first brings an open
    /// position's fees up to date). On a closed position this retires it from livePositions.
    /// Allowed while suspended.
    function collectFees(uint256 positionId) external onlyAgent {
        Position storage p = positions[positionId];
        if (!p.exists) revert UnknownPosition();
        if (!p.live) revert PositionClosedAlready();
        if (p.liquidity > 0) IUniswapV3PoolV(pool).burn(p.tickLower, p.tickUpper, 0);
        else p.live = false;
        (uint128 got0, uint128 got1) = IUniswapV3PoolV(pool).collect(
            address(this), p.tickLower, p.tickUpper, type(uint128).max, type(uint128).max
        );
        emit FeesCollected(positionId, got0, got1);
    }

    /// Swaps idle tokens of one side of the vault's pool for the other, in that pool (the agent
    /// setting the vault's token ratio before a mint): at most `amountIn` in, stopping at
    /// `sqrtPriceLimitX96`; the pool takes the input in uniswapV3SwapCallback and pays the output
    /// to the vault. Swapped carries what was actually paid and received.
    function swap(bool zeroForOne, uint256 amountIn, uint160 sqrtPriceLimitX96)
        external
        onlyAgent
        active
        returns (uint256 amountOut)
    {
        if (exitRequested) revert ExitPending();
        if (amountIn == 0 || amountIn > uint256(type(int256).max)) revert BadAmount();
        (int256 a0, int256 a1) =
            IUniswapV3PoolV(pool).swap(address(this), zeroForOne, int256(amountIn), sqrtPriceLimitX96, "");
        (int256 paid, int256 got) = zeroForOne ? (a0, a1) : (a1, a0);
        amountOut = uint256(-got);
        (address tokenIn, address tokenOut) = zeroForOne ? (token0, token1) : (token1, token0);
        emit Swapped(tokenIn, uint256(paid), tokenOut, amountOut);
    }

    function accrueRewards(uint256 amount) external onlyAgent active {
        if (amount == 0) revert BadAmount();
        pendingRewards += amount;
        emit RewardsAccrued(rewardToken, amount);
    }

    /// Paid by the factory's rewards gauge. Allowed while suspended.
    function claimRewards(uint256 amount) external onlyAgent {
        if (amount == 0) revert BadAmount();
        if (amount > pendingRewards) revert InsufficientPending();
        pendingRewards -= amount;
        IRewardsGauge(gauge).pay(rewardToken, amount);
        emit RewardsClaimed(rewardToken, amount);
    }

    /// Requires an exit request and no open position. Returns every idle balance to the owner
    /// (one Withdrawn each), then emits ExitCompleted. Allowed while suspended.
    function completeExit() external onlyAgent {
        if (!exitRequested) revert NoExitRequested();
        if (openPositions != 0) revert PositionsStillOpen();
        _sweep(token0);
        _sweep(token1);
        if (rewardToken != token0 && rewardToken != token1) _sweep(rewardToken);
        exitRequested = false;
        emit ExitCompleted();
    }

    // ---- pool ----

    /// Pays what the pool asks for a mint from the vault's idle balance.
    function uniswapV3MintCallback(uint256 amount0Owed, uint256 amount1Owed, bytes calldata) external {
        if (msg.sender != pool) revert NotPool();
        if (IERC20V(token0).balanceOf(address(this)) < amount0Owed) revert InsufficientIdle();
        if (IERC20V(token1).balanceOf(address(this)) < amount1Owed) revert InsufficientIdle();
        if (amount0Owed > 0) IERC20V(token0).transfer(pool, amount0Owed);
        if (amount1Owed > 0) IERC20V(token1).transfer(pool, amount1Owed);
    }

    /// Pays what the pool asks for a swap (the positive delta) from the vault's idle balance.
    function uniswapV3SwapCallback(int256 amount0Delta, int256 amount1Delta, bytes calldata) external {
        if (msg.sender != pool) revert NotPool();
        if (amount0Delta > 0) {
            if (IERC20V(token0).balanceOf(address(this)) < uint256(amount0Delta)) revert InsufficientIdle();
            IERC20V(token0).transfer(pool, uint256(amount0Delta));
        }
        if (amount1Delta > 0) {
            if (IERC20V(token1).balanceOf(address(this)) < uint256(amount1Delta)) revert InsufficientIdle();
            IERC20V(token1).transfer(pool, uint256(amount1Delta));
        }
    }

    // ---- service roles ----

    function chargePerformanceFee(address token, uint256 amount, address recipient) external active {
        if (msg.sender != IFactoryRoles(factory).feeCollector()) revert NotFeeCollector();
        if (!_isVaultToken(token)) revert UnknownToken();
        if (amount == 0 || recipient == address(0)) revert BadAmount();
        if (IERC20V(token).balanceOf(address(this)) < amount) revert InsufficientIdle();
        IERC20V(token).transfer(recipient, amount);
        emit PerformanceFeeCharged(token, amount, recipient);
    }

    /// Allowed while suspended: it moves no funds, and only charges made after it use the new rate.
    function setPerformanceFee(uint16 bps) external {
        if (msg.sender != IFactoryRoles(factory).feeCollector()) revert NotFeeCollector();
        if (bps > MAX_PERFORMANCE_FEE_BPS) revert FeeTooHigh();
        performanceFeeBps = bps;
        emit PerformanceFeeSet(bps);
    }

    function suspend(string calldata reason) external {
        if (msg.sender != IFactoryRoles(factory).guardian()) revert NotGuardian();
        if (suspended) revert IsSuspended();
        if (bytes(reason).length == 0 || bytes(reason).length > 500) revert BadReason();
        suspended = true;
        emit Suspended(reason);
    }

    function resume() external {
        if (msg.sender != IFactoryRoles(factory).guardian()) revert NotGuardian();
        if (!suspended) revert NotSuspended();
        suspended = false;
        emit Resumed();
    }

    // ---- views ----

    function idle(address token) external view returns (uint256) {
        return IERC20V(token).balanceOf(address(this));
    }

    /// Every position that is open or closed with fees not yet collected, by id.
    function livePositions()
        external
        view
        returns (uint256[] memory ids, int24[] memory tickLowers, int24[] memory tickUppers)
    {
        uint256 n;
        for (uint256 id = 1; id < nextPositionId; id++) {
            if (positions[id].live) n++;
        }
        ids = new uint256[](n);
        tickLowers = new int24[](n);
        tickUppers = new int24[](n);
        uint256 k;
        for (uint256 id = 1; id < nextPositionId; id++) {
            Position storage p = positions[id];
            if (!p.live) continue;
            ids[k] = id;
            tickLowers[k] = p.tickLower;
            tickUppers[k] = p.tickUpper;
            k++;
        }
    }

    // ---- internals ----

    function _mint(int24 tickLower, int24 tickUpper, uint128 liquidity) private returns (uint256, uint256) {
        return IUniswapV3PoolV(pool).mint(address(this), tickLower, tickUpper, liquidity, "");
    }

    /// Burns liquidity and collects exactly the principal it returned (fees stay owed).
    function _burnPrincipal(int24 tickLower, int24 tickUpper, uint128 liquidity)
        private
        returns (uint256 a0, uint256 a1)
    {
        (a0, a1) = IUniswapV3PoolV(pool).burn(tickLower, tickUpper, liquidity);
        IUniswapV3PoolV(pool).collect(address(this), tickLower, tickUpper, uint128(a0), uint128(a1));
    }

    function _withdraw(address token, uint256 amount) private {
        if (!_isVaultToken(token)) revert UnknownToken();
        if (amount == 0) revert BadAmount();
        if (IERC20V(token).balanceOf(address(this)) < amount) revert InsufficientIdle();
        IERC20V(token).transfer(owner, amount);
        emit Withdrawn(owner, token, amount);
    }

    function _sweep(address token) private {
        uint256 bal = IERC20V(token).balanceOf(address(this));
        if (bal > 0) _withdraw(token, bal);
    }

    function _isVaultToken(address token) private view returns (bool) {
        return token == token0 || token == token1 || token == rewardToken;
    }

    function _open(uint256 positionId) private view returns (Position storage p) {
        p = positions[positionId];
        if (!p.exists) revert UnknownPosition();
        if (p.liquidity == 0) revert PositionClosedAlready();
    }

    /// No other live position may hold the same range (the pool would merge them).
    function _checkRangeFree(uint256 self, int24 tickLower, int24 tickUpper) private view {
        for (uint256 id = 1; id < nextPositionId; id++) {
            Position storage q = positions[id];
            if (id != self && q.live && q.tickLower == tickLower && q.tickUpper == tickUpper) revert RangeInUse();
        }
    }

    function _checkRange(int24 tickLower, int24 tickUpper) private view {
        int24 spacing = IUniswapV3PoolV(pool).tickSpacing();
        if (tickLower >= tickUpper || tickLower < -887272 || tickUpper > 887272) revert BadRange();
        if (tickLower % spacing != 0 || tickUpper % spacing != 0) revert BadRange();
    }
}
