// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Vault} from "./Vault.sol";

interface IPoolTokens {
    function token0() external view returns (address);
    function token1() external view returns (address);
}

/// @notice Creates vaults, holds the service-wide roles (guardian, fee collector) the vaults
/// consult, and the USD price feed registry (token → Chainlink-style feed).
contract VaultFactory {
    address public immutable admin;
    /// Block the factory was deployed in: the indexer's start block.
    uint256 public immutable deploymentBlock;
    address public guardian;
    address public feeCollector;

    mapping(address => address) public feedOf;
    mapping(address => bool) public isVault;
    address[] public vaults;

    event VaultCreated(
        address indexed vault, address indexed owner, bytes32 strategy, address token0, address token1, address pool
    );
    event FeedSet(address indexed token, address feed);
    event RolesSet(address guardian, address feeCollector);

    error NotAdmin();
    error PoolTokenMismatch();
    error ZeroAddress();
    error EmptyStrategy();

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
        if (IPoolTokens(pool).token0() != token0 || IPoolTokens(pool).token1() != token1) revert PoolTokenMismatch();
        vault = address(new Vault(owner, agent, strategy, token0, token1, pool, rewardToken));
        isVault[vault] = true;
        vaults.push(vault);
        emit VaultCreated(vault, owner, strategy, token0, token1, pool);
    }
}
