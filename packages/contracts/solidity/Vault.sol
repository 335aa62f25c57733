// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IERC20V {
    function balanceOf(address who) external view returns (uint256);
    function approve(address spender, uint256 amount) external returns (bool);
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

interface IPoolV {
    function tickSpacing() external view returns (int24);
    function addLiquidity(uint128 liq, uint256 amount0, uint256 amount1) external;
    function removeLiquidity(uint128 liq, uint256 amount0, uint256 amount1) external;
    function collect(uint256 amount0, uint256 amount1) external;
    function payReward(address token, uint256 amount) external;
}

interface IFactoryRoles {
    function guardian() external view returns (address);
    function feeCollector() external view returns (address);
}

/// @notice An agent-managed liquidity vault on one pool. Roles: the owner (deposits, withdrawals,
/// strategy, exit requests), the agent (positions, fees, rewards, exit completion), the
/// factory's guardian (suspend/resume) and the factory's fee collector (performance fee).
/// While suspended, withdrawals and unwinding (close, collect, claim, exit) stay available.
/// Token amounts for liquidity are computed by the agent off-chain (LiquidityAmounts at the
/// pool's current price); the vault checks balances, ranges and roles.
contract Vault {
    struct Position {
        int24 tickLower;
        int24 tickUpper;
        uint128 liquidity;
        bool exists;
    }

    address public immutable factory;
    address public immutable owner;
    address public immutable agent;
    address public immutable token0;
    address public immutable token1;
    address public immutable pool;
    address public immutable rewardToken;

    bytes32 public strategy;
    bool public suspended;
    bool public exitRequested;
    uint256 public pendingRewards;
    uint256 public nextPositionId = 1;
    uint256 public openPositions;
    mapping(uint256 => Position) public positions;

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

    error NotOwner();
    error NotAgent();
    error NotGuardian();
    error NotFeeCollector();
    error IsSuspended();
    error NotSuspended();
    error ExitPending();
    error NoExitRequested();
    error PositionsStillOpen();
    error UnknownToken();
    error UnknownPosition();
    error PositionClosedAlready();
    error InsufficientIdle();
    error InsufficientPending();
    error BadRange();
    error BadAmount();
    error BadReason();
    error EmptyStrategy();

    constructor(
        address owner_,
        address agent_,
        bytes32 strategy_,
        address token0_,
        address token1_,
        address pool_,
        address rewardToken_
    ) {
        factory = msg.sender;
        owner = owner_;
        agent = agent_;
        strategy = strategy_;
        token0 = token0_;
        token1 = token1_;
        pool = pool_;
        rewardToken = rewardToken_;
        IERC20V(token0_).approve(pool_, type(uint256).max);
        IERC20V(token1_).approve(pool_, type(uint256).max);
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

    /// Allowed while suspended: exits stay available.
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

    function openPosition(int24 tickLower, int24 tickUpper, uint128 liquidity, uint256 amount0, uint256 amount1)
        external
        onlyAgent
        active
        returns (uint256 positionId)
    {
        if (exitRequested) revert ExitPending();
        _checkRange(tickLower, tickUpper);
        if (liquidity == 0) revert BadAmount();
        _requireIdle(amount0, amount1);
        positionId = nextPositionId++;
        positions[positionId] = Position(tickLower, tickUpper, liquidity, true);
        openPositions += 1;
        IPoolV(pool).addLiquidity(liquidity, amount0, amount1);
        emit PositionOpened(positionId, pool, tickLower, tickUpper, liquidity, amount0, amount1);
    }

    /// Both deltas share the sign of the liquidity change (or are zero).
    function resizePosition(uint256 positionId, uint128 liquidity, int256 amount0Delta, int256 amount1Delta)
        external
        onlyAgent
        active
    {
        Position storage p = _open(positionId);
        if (liquidity == 0 || liquidity == p.liquidity) revert BadAmount();
        if (liquidity > p.liquidity) {
            if (amount0Delta < 0 || amount1Delta < 0) revert BadAmount();
            _requireIdle(uint256(amount0Delta), uint256(amount1Delta));
            IPoolV(pool).addLiquidity(liquidity - p.liquidity, uint256(amount0Delta), uint256(amount1Delta));
        } else {
            if (amount0Delta > 0 || amount1Delta > 0) revert BadAmount();
            IPoolV(pool).removeLiquidity(p.liquidity - liquidity, uint256(-amount0Delta), uint256(-amount1Delta));
        }
        p.liquidity = liquidity;
        emit PositionResized(positionId, liquidity, amount0Delta, amount1Delta);
    }

    /// Withdraws the whole old range (Out, to idle) and deposits the new range (In, from idle).
    function rebalancePosition(
        uint256 positionId,
        int24 tickLower,
        int24 tickUpper,
        uint128 liquidity,
        uint256 amount0Out,
        uint256 amount1Out,
        uint256 amount0In,
        uint256 amount1In
    ) external onlyAgent active {
        Position storage p = _open(positionId);
        _checkRange(tickLower, tickUpper);
        if (liquidity == 0) revert BadAmount();
        IPoolV(pool).removeLiquidity(p.liquidity, amount0Out, amount1Out);
        _requireIdle(amount0In, amount1In);
        IPoolV(pool).addLiquidity(liquidity, amount0In, amount1In);
        p.tickLower = tickLower;
        p.tickUpper = tickUpper;
        p.liquidity = liquidity;
        emit PositionRebalanced(
            positionId, tickLower, tickUpper, liquidity, amount0Out, amount1Out, amount0In, amount1In
        );
    }

    /// Allowed while suspended.
    function closePosition(uint256 positionId, uint256 amount0, uint256 amount1) external onlyAgent {
        Position storage p = _open(positionId);
        IPoolV(pool).removeLiquidity(p.liquidity, amount0, amount1);
        p.liquidity = 0;
        openPositions -= 1;
        emit PositionClosed(positionId, amount0, amount1);
    }

    /// Allowed while suspended, and on closed positions (fees owed at close).
    function collectFees(uint256 positionId, uint256 amount0, uint256 amount1) external onlyAgent {
        if (!positions[positionId].exists) revert UnknownPosition();
        IPoolV(pool).collect(amount0, amount1);
        emit FeesCollected(positionId, amount0, amount1);
    }

    function accrueRewards(uint256 amount) external onlyAgent active {
        if (amount == 0) revert BadAmount();
        pendingRewards += amount;
        emit RewardsAccrued(rewardToken, amount);
    }

    /// Allowed while suspended.
    function claimRewards(uint256 amount) external onlyAgent {
        if (amount == 0) revert BadAmount();
        if (amount > pendingRewards) revert InsufficientPending();
        pendingRewards -= amount;
        IPoolV(pool).payReward(rewardToken, amount);
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

    // ---- service roles ----

    function chargePerformanceFee(address token, uint256 amount, address recipient) external active {
        if (msg.sender != IFactoryRoles(factory).feeCollector()) revert NotFeeCollector();
        if (!_isVaultToken(token)) revert UnknownToken();
        if (amount == 0 || recipient == address(0)) revert BadAmount();
        if (IERC20V(token).balanceOf(address(this)) < amount) revert InsufficientIdle();
        IERC20V(token).transfer(recipient, amount);
        emit PerformanceFeeCharged(token, amount, recipient);
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

    // ---- internals ----

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

    function _requireIdle(uint256 amount0, uint256 amount1) private view {
        if (IERC20V(token0).balanceOf(address(this)) < amount0) revert InsufficientIdle();
        if (IERC20V(token1).balanceOf(address(this)) < amount1) revert InsufficientIdle();
    }

    function _checkRange(int24 tickLower, int24 tickUpper) private view {
        int24 spacing = IPoolV(pool).tickSpacing();
        if (tickLower >= tickUpper || tickLower < -887272 || tickUpper > 887272) revert BadRange();
        if (tickLower % spacing != 0 || tickUpper % spacing != 0) revert BadRange();
    }
}
