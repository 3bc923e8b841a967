"""Reads a flashlog gateway's `pending` answers with web3.py (test/e2e/strict-clients.test.ts).

Usage: python strict_client.py '<config JSON>' with http, ws, account, call {to, data},
transactions (how many of the pending block's transactions to read by hash) and notifications
(how many to read from each subscription). Prints one JSON summary: one entry per check, with the
method, whether it passed and each error's text. web3.py runs every answer through its result
formatters (hex quantities to int, addresses to checksummed, hashes to bytes, the block, the
transaction, the receipt and the log as attribute dicts) and raises on what it cannot read; each
signed transaction is encoded again by eth-account (web3.py's signer) from the answered fields,
and must hash to the answered hash.
"""

import asyncio
import json
import sys
import traceback

from eth_account._utils.legacy_transactions import encode_transaction, serializable_unsigned_transaction_from_dict
from eth_account.typed_transactions import TypedTransaction
from web3 import AsyncWeb3, Web3
from web3.providers.persistent import WebSocketProvider


def describe(error):
    text = f"{type(error).__name__}: {error}"
    return text[:2000]


class Check:
    def __init__(self, summary, method):
        self.entry = {"method": method, "ok": True, "count": 0, "errors": []}
        summary["checks"].append(self.entry)

    def fail(self, what, error):
        self.entry["ok"] = False
        self.entry["errors"].append({"what": what, "error": error if isinstance(error, str) else describe(error)})

    def count(self, n=1):
        self.entry["count"] += n


def attempt(check, what, fn):
    try:
        return fn()
    except Exception as error:  # noqa: BLE001 - every failure is reported, none is fatal
        check.fail(what, error)
        return None


def rehash(tx):
    """The transaction's hash as eth-account derives it from the answered fields (signature
    included: a typed transaction's `v` is its y-parity in the encoding)."""
    kind = tx["type"]
    r, s = int.from_bytes(tx["r"], "big"), int.from_bytes(tx["s"], "big")
    if kind == 0:
        fields = {key: tx[key] for key in ("nonce", "gasPrice", "gas", "value")}
        fields["to"] = tx["to"] or b""
        fields["data"] = tx["input"]
        if tx["v"] >= 35:
            fields["chainId"] = (tx["v"] - 35) // 2
        unsigned = serializable_unsigned_transaction_from_dict(fields)
        return Web3.keccak(encode_transaction(unsigned, vrs=(tx["v"], r, s)))
    fields = {
        "type": kind,
        "chainId": tx["chainId"],
        "nonce": tx["nonce"],
        "gas": tx["gas"],
        "value": tx["value"],
        "data": tx["input"],
        "accessList": [
            {"address": entry["address"], "storageKeys": [Web3.to_hex(key) for key in entry["storageKeys"]]}
            for entry in tx.get("accessList", [])
        ],
        "v": tx["v"],
        "r": r,
        "s": s,
    }
    if tx.get("to"):
        fields["to"] = tx["to"]
    if kind == 1:
        fields["gasPrice"] = tx["gasPrice"]
    else:
        fields["maxFeePerGas"] = tx["maxFeePerGas"]
        fields["maxPriorityFeePerGas"] = tx["maxPriorityFeePerGas"]
    return Web3.keccak(TypedTransaction.from_dict(fields).encode())


def check_hash(check, label, tx):
    """Re-derives a signed transaction's hash (types 0, 1, 2; deposits carry no signature)."""
    if tx["type"] not in (0, 1, 2):
        return
    try:
        derived = bytes(rehash(tx))
    except Exception as error:  # noqa: BLE001
        check.fail(label, error)
        return
    if derived != bytes(tx["hash"]):
        check.fail(
            label,
            f"eth-account encodes the answered fields (v {tx['v']}, yParity {tx.get('yParity')}) to hash "
            f"0x{derived.hex()}, not {tx['hash'].to_0x_hex()}",
        )


def run_http(config, summary):
    w3 = Web3(Web3.HTTPProvider(config["http"], request_kwargs={"timeout": 30}))
    account = Web3.to_checksum_address(config["account"])
    to = Web3.to_checksum_address(config["call"]["to"])
    call = {"from": account, "to": to, "data": config["call"]["data"]}
    transfer = {"from": account, "to": account, "value": 1}

    check = Check(summary, "eth_getBlockByNumber(pending, true) w3.eth.get_block")
    block = attempt(check, "get_block", lambda: w3.eth.get_block("pending", full_transactions=True))
    transactions = []
    if block is not None:
        transactions = list(block["transactions"])
        check.count(len(transactions))
        for index, tx in enumerate(transactions):
            for field in ("hash", "from", "type", "nonce", "gas", "input"):
                if field not in tx:
                    check.fail(f"transactions[{index}]", f"no {field}")
            check_hash(check, f"transactions[{index}] (type {tx['type']}, {tx['hash'].to_0x_hex()})", tx)

    check = Check(summary, "eth_getBlockByNumber(pending, false) w3.eth.get_block")
    header = attempt(check, "get_block", lambda: w3.eth.get_block("pending"))
    if header is not None:
        check.count(len(header["transactions"]))

    check = Check(summary, "eth_getBlockTransactionCountByNumber(pending)")
    count = attempt(check, "get_block_transaction_count", lambda: w3.eth.get_block_transaction_count("pending"))
    if count is not None:
        check.count(count)

    check = Check(summary, "eth_getTransactionByHash w3.eth.get_transaction")
    receipts_check = Check(summary, "eth_getTransactionReceipt w3.eth.get_transaction_receipt")
    chosen = transactions[: config["transactions"]]
    if not chosen:
        check.fail("transactions", "the pending block had no transactions to read")
    for tx in chosen:
        tx_hash = tx["hash"]
        label = f"{tx_hash.to_0x_hex()} (type {tx['type']})"
        got = attempt(check, label, lambda: w3.eth.get_transaction(tx_hash))
        if got is not None:
            if got["hash"] != tx_hash:
                check.fail(label, f"answered transaction {got['hash'].to_0x_hex()}")
            check_hash(check, label, got)
            check.count()
        receipt = attempt(receipts_check, label, lambda: w3.eth.get_transaction_receipt(tx_hash))
        if receipt is not None:
            if receipt["transactionHash"] != tx_hash:
                receipts_check.fail(label, f"receipt names {receipt['transactionHash'].to_0x_hex()}")
            receipts_check.count()

    check = Check(summary, "eth_getBlockReceipts(pending) w3.eth.get_block_receipts")
    receipts = attempt(check, "get_block_receipts", lambda: w3.eth.get_block_receipts("pending"))
    if receipts is not None:
        check.count(len(receipts))

    check = Check(summary, "eth_getLogs(pending..pending) w3.eth.get_logs")
    logs = attempt(check, "get_logs", lambda: w3.eth.get_logs({"fromBlock": "pending", "toBlock": "pending"}))
    if logs is not None:
        check.count(len(logs))

    check = Check(summary, "eth_getBalance(pending) w3.eth.get_balance")
    balance = attempt(check, "get_balance", lambda: w3.eth.get_balance(account, "pending"))
    if balance is not None and balance == 0:
        check.fail("get_balance", f"{account} has no balance")
    check = Check(summary, "eth_getTransactionCount(pending) w3.eth.get_transaction_count")
    attempt(check, "get_transaction_count", lambda: w3.eth.get_transaction_count(account, "pending"))
    check = Check(summary, "eth_getCode(pending) w3.eth.get_code")
    code = attempt(check, "get_code", lambda: w3.eth.get_code(to, "pending"))
    if code is not None and len(code) == 0:
        check.fail("get_code", f"{to} has no code")
    check = Check(summary, "eth_getStorageAt(pending) w3.eth.get_storage_at")
    attempt(check, "get_storage_at", lambda: w3.eth.get_storage_at(to, 0, "pending"))

    check = Check(summary, "eth_call(pending) w3.eth.call")
    out = attempt(check, "call", lambda: w3.eth.call(call, "pending"))
    if out is not None and len(out) == 0:
        check.fail("call", "empty return data")
    check = Check(summary, "eth_estimateGas(pending) w3.eth.estimate_gas")
    gas = attempt(check, "estimate_gas", lambda: w3.eth.estimate_gas(transfer, "pending"))
    if gas is not None and gas < 21000:
        check.fail("estimate_gas", f"a transfer estimated at {gas} gas")

    check = Check(summary, "eth_simulateV1(pending, returnFullTransactions) w3.eth.simulate_v1")
    payload = {"blockStateCalls": [{"calls": [call, transfer]}], "returnFullTransactions": True}
    blocks = attempt(check, "simulate_v1", lambda: w3.eth.simulate_v1(payload, "pending"))
    if blocks is not None:
        if len(blocks) != 1 or len(blocks[0]["calls"]) != 2:
            check.fail("simulate_v1", f"{len(blocks)} blocks")
        else:
            for index, result in enumerate(blocks[0]["calls"]):
                if result["status"] != 1:
                    check.fail(f"calls[{index}]", f"status {result['status']}: {result.get('error')}")
                check.count()


async def run_ws(config, summary):
    heads = Check(summary, "eth_subscribe(newHeads) w3.eth.subscribe")
    logs = Check(summary, "eth_subscribe(logs) w3.eth.subscribe")
    wanted = config["notifications"]
    try:
        async with AsyncWeb3(WebSocketProvider(config["ws"])) as w3:
            head_id = await w3.eth.subscribe("newHeads")
            log_id = await w3.eth.subscribe("logs", {})

            async def read():
                async for message in w3.socket.process_subscriptions():
                    target = heads if message["subscription"] == head_id else logs
                    result = message["result"]
                    if target is heads:
                        for field in ("number", "hash", "parentHash", "timestamp"):
                            if field not in result:
                                heads.fail("newHeads", f"no {field}")
                    target.count()
                    if heads.entry["count"] >= wanted and logs.entry["count"] >= wanted:
                        return

            await asyncio.wait_for(read(), timeout=config.get("timeoutMs", 30000) / 1000)
    except asyncio.TimeoutError:
        for check in (heads, logs):
            if check.entry["count"] < wanted:
                check.fail("notifications", f"{check.entry['count']} of {wanted} before the deadline")
    except Exception as error:  # noqa: BLE001
        heads.fail("subscribe", error)
        logs.fail("subscribe", error)


def main():
    config = json.loads(sys.argv[1])
    import web3

    summary = {"client": f"web3.py {web3.__version__}", "checks": []}
    try:
        run_http(config, summary)
        asyncio.run(run_ws(config, summary))
    except Exception as error:  # noqa: BLE001
        summary["checks"].append(
            {"method": "connect", "ok": False, "count": 0, "errors": [{"what": "run", "error": traceback.format_exc()[-2000:]}]}
        )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
