// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Vault, MAX_PERFORMANCE_FEE_BPS} from "./Vault.sol";

interface IPoolTokens {
    function token0() external view returns (address);
    function token1() external view returns (address);
}

/// @notice Creates vaults, holds the service-wide roles (guardian, fee collector) the vaults
/// consult, the USD price feed registry (token → AggregatorV3Interface feed), the venue registry
/// (pool → venue name, e.g. "uniswap-v3"; a vault needs a registered pool) and the rewards gauge
/// that pays the vaults' claimed rewards, and the performance-fee rate new vaults start with.
contract VaultFactory {
    address public immutable admin;
    /// Block the factory was deployed in: the indexer's start block.
    uint256 public immutable deploymentBlock;
    address public guardian;
    address public feeCollector;
    /// RewardsGauge paying claimed rewards; given to every vault created after it is set.
    address public gauge;
    /// Rate (basis points of the gain) a new vault starts with. Changing it leaves existing vaults
    /// at theirs: a vault's rate is its own once created (the fee collector changes it there).
    uint16 public defaultPerformanceFeeBps = 2000;

    mapping(address => address) public feedOf;
    mapping(address => string) public venueOf;
    mapping(address => bool) public isVault;
    address[] public vaults;

    /// performanceFeeBps is the new vault's rate: last, so the fields before it keep their places.
    event VaultCreated(
        address indexed vault,
        address indexed owner,
        bytes32 strategy,
        address token0,
        address token1,
        address pool,
        uint16 performanceFeeBps
    );
    event FeedSet(address indexed token, address feed);
    event RolesSet(address guardian, address feeCollector);
    event VenueSet(address indexed pool, string venue);
    event GaugeSet(address gauge);
    event DefaultPerformanceFeeSet(uint16 performanceFeeBps);

    error NotAdmin();
    error PoolTokenMismatch();
    error ZeroAddress();
    error EmptyStrategy();
    error UnknownVenue();
    error NoGauge();
    error FeeTooHigh();

    constructor(address guardian_, address feeCollector_) {
        admin = msg.sender;
        deploymentBlock = block.number;
        guardian = guardian_;
        feeCollector = feeCollector_;
        emit RolesSet(guardian_, feeCollector_);
    }

    modifier onlyAdmin() {
        if (msg.sender != admin) revert NotAdmin();
        _;
    }

    function setRoles(address guardian_, address feeCollector_) external onlyAdmin {
        guardian = guardian_;
        feeCollector = feeCollector_;
        emit RolesSet(guardian_, feeCollector_);
    }

    function setFeed(address token, address feed) external onlyAdmin {
        if (token == address(0)) revert ZeroAddress();
        feedOf[token] = feed;
        emit FeedSet(token, feed);
    }

    function setVenue(address pool, string calldata venue) external onlyAdmin {
        if (pool == address(0)) revert ZeroAddress();
        venueOf[pool] = venue;
        emit VenueSet(pool, venue);
    }

    function setGauge(address gauge_) external onlyAdmin {
        if (gauge_ == address(0)) revert ZeroAddress();
        gauge = gauge_;
        emit GaugeSet(gauge_);
    }

    function setDefaultPerformanceFee(uint16 bps) external onlyAdmin {
        if (bps > MAX_PERFORMANCE_FEE_BPS) revert FeeTooHigh();
        defaultPerformanceFeeBps = bps;
        emit DefaultPerformanceFeeSet(bps);
    }

    function vaultCount() external view returns (uint256) {
        return vaults.length;
    }

    function createVault(
        address owner,
        address agent,
        bytes32 strategy,
        address token0,
        address token1,
        address pool,
        address rewardToken
    ) external returns (address vault) {
        if (owner == address(0) || agent == address(0) || rewardToken == address(0)) revert ZeroAddress();
        if (strategy == bytes32(0)) revert EmptyStrategy();
        if (bytes(venueOf[pool]).length == 0) revert UnknownVenue();
        if (gauge == address(0)) revert NoGauge();
        if (IPoolTokens(pool).token0() != token0 || IPoolTokens(pool).token1() != token1) revert PoolTokenMismatch();
        uint16 feeBps = defaultPerformanceFeeBps;
        vault = address(new Vault(owner, agent, strategy, token0, token1, pool, rewardToken, gauge, feeBps));
        isVault[vault] = true;
        vaults.push(vault);
        emit VaultCreated(vault, owner, strategy, token0, token1, pool, feeBps);
    }
}
