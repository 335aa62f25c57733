// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice Chainlink-style USD price feed (AggregatorV3Interface subset), 8 decimals.
contract MockAggregator {
    uint8 public constant decimals = 8;
    string public description;
    address public immutable updater;

    uint80 private _roundId;
    int256 private _answer;
    uint256 private _updatedAt;

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    error NotUpdater();

    constructor(string memory description_, int256 initialAnswer) {
        description = description_;
        updater = msg.sender;
        _update(initialAnswer);
    }

    function updateAnswer(int256 answer) external {
        if (msg.sender != updater) revert NotUpdater();
        _update(answer);
    }

    function latestAnswer() external view returns (int256) {
        return _answer;
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return (_roundId, _answer, _updatedAt, _updatedAt, _roundId);
    }

    function _update(int256 answer) private {
        _roundId += 1;
        _answer = answer;
        _updatedAt = block.timestamp;
        emit AnswerUpdated(answer, _roundId, block.timestamp);
    }
}
