// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IERC20G {
    function transfer(address to, uint256 amount) external returns (bool);
}

interface IVaultRegistry {
    function isVault(address who) external view returns (bool);
}

/// @notice Holds reward tokens (funded by plain transfers or mints) and pays a vault's claimed
/// rewards to that vault. Only vaults created by its factory can be paid.
contract RewardsGauge {
    address public immutable factory;

    event Paid(address indexed vault, address indexed token, uint256 amount);

    error NotVault();

    constructor(address factory_) {
        factory = factory_;
    }

    function pay(address token, uint256 amount) external {
        if (!IVaultRegistry(factory).isVault(msg.sender)) revert NotVault();
        IERC20G(token).transfer(msg.sender, amount);
        emit Paid(msg.sender, token, amount);
    }
}
