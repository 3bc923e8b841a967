// Command strictclient reads a flashlog gateway's `pending` answers with go-ethereum's ethclient
// and its typed structs (types.Header, types.Transaction, types.Receipt, types.Log), whose JSON
// decoding is strict: required fields, minimal hex quantities, `v` = `yParity` on typed
// transactions. It is op-geth's build of go-ethereum (see go.mod), so the OP deposit transaction
// (type 0x7e) decodes too.
//
// Usage: strictclient '<config JSON>' (see config). It prints one JSON summary on stdout: one
// entry per check, with the method, whether it passed, and each error's text. Its exit code is 0
// whenever it could print the summary; the test reads the summary.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"runtime/debug"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/ethereum/go-ethereum/trie"
)

type config struct {
	HTTP string `json:"http"`
	WS   string `json:"ws"`
	// A funded account: balance, nonce, the sender of estimateGas and simulate.
	Account common.Address `json:"account"`
	// A view call (`to`, `data`) for eth_call.
	Call struct {
		To   common.Address `json:"to"`
		Data hexutil.Bytes  `json:"data"`
	} `json:"call"`
	// How many transactions of the pending block to read by hash (and their receipts).
	Transactions int `json:"transactions"`
	// How many notifications to read from each subscription.
	Notifications int `json:"notifications"`
	TimeoutMs     int `json:"timeoutMs"`
}

type failure struct {
	What  string `json:"what"`
	Error string `json:"error"`
}

type check struct {
	Method string    `json:"method"`
	Ok     bool      `json:"ok"`
	Count  int       `json:"count"`
	Note   string    `json:"note,omitempty"`
	Errors []failure `json:"errors"`
}

type summary struct {
	Client string   `json:"client"`
	Checks []*check `json:"checks"`
}

var pending = big.NewInt(int64(rpc.PendingBlockNumber))

func (c *check) fail(what string, err error) {
	c.Ok = false
	c.Errors = append(c.Errors, failure{What: what, Error: err.Error()})
}

func newCheck(s *summary, method string) *check {
	c := &check{Method: method, Ok: true, Errors: []failure{}}
	s.Checks = append(s.Checks, c)
	return c
}

func clientVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "go-ethereum"
	}
	for _, dep := range info.Deps {
		if dep.Path == "github.com/ethereum/go-ethereum" {
			if dep.Replace != nil {
				return fmt.Sprintf("go-ethereum ethclient (%s %s)", dep.Replace.Path, dep.Replace.Version)
			}
			return "go-ethereum ethclient " + dep.Version
		}
	}
	return "go-ethereum"
}

// blockJSON holds what a block answer carries beside the header fields.
type blockJSON struct {
	Hash         common.Hash       `json:"hash"`
	Transactions []json.RawMessage `json:"transactions"`
}

type txExtra struct {
	Hash  common.Hash     `json:"hash"`
	From  *common.Address `json:"from"`
	Type  hexutil.Uint64  `json:"type"`
	Index *hexutil.Uint64 `json:"transactionIndex"`
}

// decodeBlock decodes a full block answer the way ethclient does (header, then each transaction),
// one transaction at a time so that each failure names its transaction, and checks what a strict
// client can recompute: each transaction's hash and sender, the transactions root, the block hash.
func decodeBlock(c *check, signer types.Signer, raw json.RawMessage, full bool) []*types.Transaction {
	var header *types.Header
	if err := json.Unmarshal(raw, &header); err != nil {
		c.fail("header", err)
		return nil
	}
	if header == nil {
		c.fail("block", errors.New("null"))
		return nil
	}
	var body blockJSON
	if err := json.Unmarshal(raw, &body); err != nil {
		c.fail("block", err)
		return nil
	}
	if body.Hash != (common.Hash{}) && header.Hash() != body.Hash {
		c.fail("hash", fmt.Errorf("block %d: hash %s, but its header hashes to %s", header.Number, body.Hash, header.Hash()))
	}
	c.Count = len(body.Transactions)
	if !full {
		return nil
	}
	txs := make([]*types.Transaction, 0, len(body.Transactions))
	for i, rawTx := range body.Transactions {
		tx := decodeTransaction(c, signer, fmt.Sprintf("transactions[%d]", i), rawTx)
		if tx != nil {
			txs = append(txs, tx)
		}
	}
	if len(body.Transactions) > 0 && header.TxHash == (common.Hash{}) {
		c.fail("transactionsRoot", fmt.Errorf("block %d: transactionsRoot is zero, with %d transactions", header.Number, len(body.Transactions)))
	} else if len(txs) == len(body.Transactions) {
		root := types.DeriveSha(types.Transactions(txs), trieHasher())
		if root != header.TxHash {
			c.fail("transactionsRoot", fmt.Errorf("block %d: transactionsRoot %s, but its %d transactions hash to %s", header.Number, header.TxHash, len(txs), root))
		}
	}
	return txs
}

func decodeTransaction(c *check, signer types.Signer, what string, raw json.RawMessage) *types.Transaction {
	var extra txExtra
	_ = json.Unmarshal(raw, &extra)
	label := fmt.Sprintf("%s (type 0x%x, %s)", what, uint64(extra.Type), extra.Hash)
	var tx *types.Transaction
	if err := json.Unmarshal(raw, &tx); err != nil {
		c.fail(label, fmt.Errorf("%w, in %s", err, elided(raw)))
		return nil
	}
	if tx.Hash() != extra.Hash {
		c.fail(label, fmt.Errorf("hash %s, but the transaction hashes to %s", extra.Hash, tx.Hash()))
	}
	if extra.From != nil {
		sender, err := types.Sender(signer, tx)
		if err != nil {
			c.fail(label, fmt.Errorf("sender: %w", err))
		} else if sender != *extra.From {
			c.fail(label, fmt.Errorf("from %s, but the signature recovers %s", extra.From, sender))
		}
	}
	return tx
}

// elided is a transaction's JSON without its input (for error messages).
func elided(raw json.RawMessage) string {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return string(raw)
	}
	delete(fields, "input")
	out, _ := json.Marshal(fields)
	return string(out)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: strictclient '<config JSON>'")
		os.Exit(2)
	}
	var cfg config
	if err := json.Unmarshal([]byte(os.Args[1]), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "config:", err)
		os.Exit(2)
	}
	if cfg.TimeoutMs == 0 {
		cfg.TimeoutMs = 30_000
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.TimeoutMs)*time.Millisecond)
	defer cancel()
	s := &summary{Client: clientVersion(), Checks: []*check{}}
	if err := run(ctx, cfg, s); err != nil {
		c := newCheck(s, "connect")
		c.fail("connect", err)
	}
	out, _ := json.Marshal(s)
	fmt.Println(string(out))
}

func run(ctx context.Context, cfg config, s *summary) error {
	client, err := ethclient.DialContext(ctx, cfg.HTTP)
	if err != nil {
		return err
	}
	defer client.Close()
	raw := client.Client()
	chainID, err := client.ChainID(ctx)
	if err != nil {
		return err
	}
	signer := types.LatestSignerForChainID(chainID)

	// Blocks: ethclient's own decode, then one transaction at a time.
	c := newCheck(s, "eth_getBlockByNumber(pending, true) ethclient.BlockByNumber")
	if block, err := client.BlockByNumber(ctx, pending); err != nil {
		c.fail("BlockByNumber", err)
	} else {
		c.Count = len(block.Transactions())
	}
	c = newCheck(s, "eth_getBlockByNumber(pending, true) types.Header + types.Transaction")
	var fullBlock json.RawMessage
	var txs []*types.Transaction
	if err := raw.CallContext(ctx, &fullBlock, "eth_getBlockByNumber", "pending", true); err != nil {
		c.fail("call", err)
	} else {
		txs = decodeBlock(c, signer, fullBlock, true)
	}
	c = newCheck(s, "eth_getBlockByNumber(pending, false) ethclient.HeaderByNumber")
	if _, err := client.HeaderByNumber(ctx, pending); err != nil {
		c.fail("HeaderByNumber", err)
	}
	var hashesBlock json.RawMessage
	if err := raw.CallContext(ctx, &hashesBlock, "eth_getBlockByNumber", "pending", false); err != nil {
		c.fail("call", err)
	} else {
		decodeBlock(c, signer, hashesBlock, false)
	}
	c = newCheck(s, "eth_getBlockTransactionCountByNumber(pending) ethclient.PendingTransactionCount")
	if n, err := client.PendingTransactionCount(ctx); err != nil {
		c.fail("PendingTransactionCount", err)
	} else {
		c.Count = int(n)
	}

	// Transactions by hash and their receipts.
	limit := min(cfg.Transactions, len(txs))
	c = newCheck(s, "eth_getTransactionByHash ethclient.TransactionByHash")
	cr := newCheck(s, "eth_getTransactionReceipt ethclient.TransactionReceipt")
	for _, tx := range txs[:limit] {
		var rawTx json.RawMessage
		if err := raw.CallContext(ctx, &rawTx, "eth_getTransactionByHash", tx.Hash()); err != nil {
			c.fail(tx.Hash().String(), err)
		} else if decoded := decodeTransaction(c, signer, "transaction", rawTx); decoded != nil {
			c.Count++
		}
		if _, _, err := client.TransactionByHash(ctx, tx.Hash()); err != nil {
			c.fail(fmt.Sprintf("TransactionByHash %s (type 0x%x)", tx.Hash(), tx.Type()), err)
		}
		receipt, err := client.TransactionReceipt(ctx, tx.Hash())
		if err != nil {
			cr.fail(fmt.Sprintf("%s (type 0x%x)", tx.Hash(), tx.Type()), err)
			continue
		}
		if receipt.TxHash != tx.Hash() {
			cr.fail(tx.Hash().String(), fmt.Errorf("receipt names transaction %s", receipt.TxHash))
		}
		cr.Count++
	}
	if limit == 0 {
		c.fail("transactions", errors.New("the pending block had no transactions to read"))
	}

	c = newCheck(s, "eth_getBlockReceipts(pending) ethclient.BlockReceipts")
	if receipts, err := client.BlockReceipts(ctx, rpc.BlockNumberOrHashWithNumber(rpc.PendingBlockNumber)); err != nil {
		c.fail("BlockReceipts", err)
	} else {
		c.Count = len(receipts)
		for i, receipt := range receipts {
			if receipt.Bloom != types.CreateBloom(receipt) {
				c.fail(fmt.Sprintf("receipts[%d] %s", i, receipt.TxHash), errors.New("logsBloom is not the bloom of its logs"))
			}
		}
	}

	// ethclient.BlockReceipts sends the block as an EIP-1898 object ({"blockNumber": "pending"});
	// the same answer asked for with the plain tag, into the same typed receipts.
	c = newCheck(s, "eth_getBlockReceipts(\"pending\") []*types.Receipt")
	var receipts []*types.Receipt
	if err := raw.CallContext(ctx, &receipts, "eth_getBlockReceipts", "pending"); err != nil {
		c.fail("call", err)
	} else {
		c.Count = len(receipts)
	}

	c = newCheck(s, "eth_getLogs(pending..pending) ethclient.FilterLogs")
	if logs, err := client.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: pending, ToBlock: pending}); err != nil {
		c.fail("FilterLogs", err)
	} else {
		c.Count = len(logs)
	}

	// State.
	c = newCheck(s, "eth_getBalance(pending) ethclient.PendingBalanceAt")
	if balance, err := client.PendingBalanceAt(ctx, cfg.Account); err != nil {
		c.fail("PendingBalanceAt", err)
	} else if balance.Sign() == 0 {
		c.fail("PendingBalanceAt", fmt.Errorf("%s has no balance", cfg.Account))
	}
	c = newCheck(s, "eth_getTransactionCount(pending) ethclient.PendingNonceAt")
	if _, err := client.PendingNonceAt(ctx, cfg.Account); err != nil {
		c.fail("PendingNonceAt", err)
	}
	c = newCheck(s, "eth_getCode(pending) ethclient.PendingCodeAt")
	if code, err := client.PendingCodeAt(ctx, cfg.Call.To); err != nil {
		c.fail("PendingCodeAt", err)
	} else if len(code) == 0 {
		c.fail("PendingCodeAt", fmt.Errorf("%s has no code", cfg.Call.To))
	}
	c = newCheck(s, "eth_getStorageAt(pending) ethclient.PendingStorageAt")
	if _, err := client.PendingStorageAt(ctx, cfg.Call.To, common.Hash{}); err != nil {
		c.fail("PendingStorageAt", err)
	}

	call := ethereum.CallMsg{From: cfg.Account, To: &cfg.Call.To, Data: cfg.Call.Data}
	c = newCheck(s, "eth_call(pending) ethclient.PendingCallContract")
	if out, err := client.PendingCallContract(ctx, call); err != nil {
		c.fail("PendingCallContract", err)
	} else if len(out) == 0 {
		c.fail("PendingCallContract", errors.New("empty return data"))
	}
	transfer := ethereum.CallMsg{From: cfg.Account, To: &cfg.Account, Value: big.NewInt(1)}
	c = newCheck(s, "eth_estimateGas(pending) ethclient.EstimateGasAtBlock")
	if gas, err := client.EstimateGasAtBlock(ctx, transfer, pending); err != nil {
		c.fail("EstimateGasAtBlock", err)
	} else if gas < 21000 {
		c.fail("EstimateGasAtBlock", fmt.Errorf("a transfer estimated at %d gas", gas))
	}

	c = newCheck(s, "eth_simulateV1(pending) ethclient.SimulateV1")
	at := rpc.BlockNumberOrHashWithNumber(rpc.PendingBlockNumber)
	options := ethclient.SimulateOptions{BlockStateCalls: []ethclient.SimulateBlock{{Calls: []ethereum.CallMsg{call, transfer}}}}
	if blocks, err := client.SimulateV1(ctx, options, &at); err != nil {
		c.fail("SimulateV1", err)
	} else if len(blocks) != 1 || len(blocks[0].Calls) != 2 {
		c.fail("SimulateV1", fmt.Errorf("%d blocks", len(blocks)))
	} else {
		c.Count = len(blocks[0].Calls)
		for i, result := range blocks[0].Calls {
			if result.Status != 1 {
				c.fail(fmt.Sprintf("calls[%d]", i), fmt.Errorf("status %d, error %+v", result.Status, result.Error))
			}
		}
	}
	c = newCheck(s, "eth_simulateV1(pending, returnFullTransactions) types.Header + types.Transaction")
	options.ReturnFullTransactions = true
	var simulated []json.RawMessage
	if err := raw.CallContext(ctx, &simulated, "eth_simulateV1", options, at); err != nil {
		c.fail("call", err)
	} else {
		for i, block := range simulated {
			var header *types.Header
			if err := json.Unmarshal(block, &header); err != nil {
				c.fail(fmt.Sprintf("[%d] header", i), err)
			}
			var body blockJSON
			if err := json.Unmarshal(block, &body); err != nil {
				c.fail(fmt.Sprintf("[%d]", i), err)
			}
			for j, rawTx := range body.Transactions {
				// Simulated transactions are unsigned: decode them, check nothing about their signature.
				var tx *types.Transaction
				if err := json.Unmarshal(rawTx, &tx); err != nil {
					c.fail(fmt.Sprintf("[%d].transactions[%d]", i, j), err)
				} else {
					c.Count++
				}
			}
		}
	}

	subscriptions(ctx, cfg, s, signer)
	return nil
}

func subscriptions(ctx context.Context, cfg config, s *summary, signer types.Signer) {
	c := newCheck(s, "eth_subscribe(newHeads) ethclient.SubscribeNewHead")
	cl := newCheck(s, "eth_subscribe(logs) ethclient.SubscribeFilterLogs")
	client, err := ethclient.DialContext(ctx, cfg.WS)
	if err != nil {
		c.fail("dial", err)
		cl.fail("dial", err)
		return
	}
	defer client.Close()
	// newHeads through the raw client too, so that each header's hash can be checked.
	rawHeads := make(chan json.RawMessage, 64)
	headSub, err := client.Client().EthSubscribe(ctx, rawHeads, "newHeads")
	if err != nil {
		c.fail("subscribe", err)
	}
	heads := make(chan *types.Header, 64)
	typedSub, err := client.SubscribeNewHead(ctx, heads)
	if err != nil {
		c.fail("SubscribeNewHead", err)
	}
	logs := make(chan types.Log, 1024)
	logSub, err := client.SubscribeFilterLogs(ctx, ethereum.FilterQuery{}, logs)
	if err != nil {
		cl.fail("SubscribeFilterLogs", err)
	}
	var headErr, typedErr, logErr <-chan error
	if headSub != nil {
		defer headSub.Unsubscribe()
		headErr = headSub.Err()
	}
	if typedSub != nil {
		defer typedSub.Unsubscribe()
		typedErr = typedSub.Err()
	}
	if logSub != nil {
		defer logSub.Unsubscribe()
		logErr = logSub.Err()
	}
	rawCount, typedCount := 0, 0
	for (headSub != nil && rawCount < cfg.Notifications) || (typedSub != nil && typedCount < cfg.Notifications) || (logSub != nil && cl.Count < cfg.Notifications) {
		select {
		case <-ctx.Done():
			if rawCount < cfg.Notifications || typedCount < cfg.Notifications {
				c.fail("notifications", fmt.Errorf("%d (raw) and %d (typed) of %d before the deadline", rawCount, typedCount, cfg.Notifications))
			}
			if cl.Count < cfg.Notifications {
				cl.fail("notifications", fmt.Errorf("%d of %d before the deadline", cl.Count, cfg.Notifications))
			}
			c.Count = typedCount
			return
		case message := <-rawHeads:
			rawCount++
			decodeBlock(c, signer, message, false)
		case <-heads:
			typedCount++
		case <-logs:
			cl.Count++
		case err := <-headErr:
			c.fail("newHeads", err)
			headSub, headErr = nil, nil
		case err := <-typedErr:
			// A notification ethclient cannot decode ends its subscription with the decode error.
			c.fail("SubscribeNewHead", err)
			typedSub, typedErr = nil, nil
		case err := <-logErr:
			cl.fail("SubscribeFilterLogs", err)
			logSub, logErr = nil, nil
		}
	}
	c.Count = typedCount
}

// trieHasher is the stack trie go-ethereum derives list roots with.
func trieHasher() types.ListHasher { return trie.NewStackTrie(nil) }
