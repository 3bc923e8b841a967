package main

// `strictclient decode TX_JSON [RECEIPT_JSON]`: op-geth's own types (core/types, which know the
// post-exec transaction, type 0x7D) decode one JSON-RPC transaction (and receipt) as ethclient
// would, and print what they make of it as one JSON line: type, hash, sender, EIP-2718 bytes,
// and the receipt's type, status and cumulative gas. Used by test/integration/lagoon-strict-client.test.ts.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
)

func init() {
	if len(os.Args) < 3 || os.Args[1] != "decode" {
		return
	}
	out := map[string]any{}
	var tx types.Transaction
	if err := json.Unmarshal([]byte(os.Args[2]), &tx); err != nil {
		out["txError"] = err.Error()
	} else {
		raw, _ := tx.MarshalBinary()
		out["type"] = tx.Type()
		out["hash"] = tx.Hash().Hex()
		out["raw"] = hexutil.Encode(raw)
		if from, err := types.Sender(types.LatestSignerForChainID(big.NewInt(10)), &tx); err != nil {
			out["senderError"] = err.Error()
		} else {
			out["from"] = from.Hex()
		}
	}
	if len(os.Args) > 3 {
		var receipt types.Receipt
		if err := json.Unmarshal([]byte(os.Args[3]), &receipt); err != nil {
			out["receiptError"] = err.Error()
		} else {
			out["receipt"] = map[string]any{"type": receipt.Type, "status": receipt.Status, "cumulativeGasUsed": receipt.CumulativeGasUsed}
		}
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
	os.Exit(0)
}
