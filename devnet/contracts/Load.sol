// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// A minimal ERC-20 for the load generator: the deployer holds the whole supply.
contract DevnetToken {
    string public constant name = "Devnet Token";
    string public constant symbol = "DEV";
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(uint256 supply) {
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        require(balanceOf[msg.sender] >= value, "balance");
        balanceOf[msg.sender] -= value;
        balanceOf[to] += value;
        emit Transfer(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        require(balanceOf[from] >= value, "balance");
        require(allowance[from][msg.sender] >= value, "allowance");
        allowance[from][msg.sender] -= value;
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
        return true;
    }
}

/// Log-heavy calls, storage writes and reverts for the load generator; also what it deploys.
contract DevnetWorkload {
    event Ping(address indexed sender, uint256 indexed seq, bytes32 tag, uint256 value);
    event Note(bytes data);

    uint256 public counter;
    mapping(uint256 => uint256) public slots;

    /// Emits `count` Ping logs and one Note, and writes `count` storage slots.
    function emitMany(uint256 count, bytes calldata data) external payable {
        for (uint256 i = 0; i < count; i++) {
            counter += 1;
            slots[counter] = block.number;
            emit Ping(msg.sender, counter, keccak256(abi.encode(counter, data)), msg.value);
        }
        emit Note(data);
    }

    /// Writes, logs, then reverts with a reason: the writes and the log are undone.
    function failWith(string calldata reason) external {
        counter += 1;
        emit Note(bytes(reason));
        revert(reason);
    }
}
