// Writes test/fixtures/jovian-chain: op-geth (v1.101702.3, from the Go module proxy, used as a
// library) builds a small OP Stack chain across the Jovian activation with core.GenerateChain,
// validates it with core.BlockChain.InsertChain (op-geth's own body and state checks, the DA
// footprint limit among them), and each block is written as a flashlog fixture
// (shared/fixtures/op-blocks format) whose preimages are the parent's whole state trie.
//
// Usage: go run . OUT_DIR   (from this folder)
package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/consensus/beacon"
	"github.com/ethereum/go-ethereum/consensus/ethash"
	"github.com/ethereum/go-ethereum/consensus/misc/eip1559"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/core/vm"
	"github.com/ethereum/go-ethereum/core/vm/program"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethdb"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rlp"
	"github.com/ethereum/go-ethereum/trie"
	"github.com/ethereum/go-ethereum/triedb"
	"github.com/holiman/uint256"
)

var (
	l1Block   = common.HexToAddress("0x4200000000000000000000000000000000000015")
	depositor = common.HexToAddress("0xDeaDDEaDDeAdDeAdDEAdDEaddeAddEAdDEAd0001")
	recipient = common.HexToAddress("0x00000000000000000000000000000000000000aa")
)

var (
	l1User = common.HexToAddress("0x00000000000000000000000000000000000000d1")
	// logger stores the block number in slot 0 and emits an empty LOG0; reverter reverts with 32 bytes.
	logger   = program.New().Op(vm.NUMBER).Push(0).Op(vm.SSTORE).Push(0).Push(0).Op(vm.LOG0).Op(vm.STOP).Bytes()
	reverter = program.New().Push(0x2a).Push(0).Op(vm.MSTORE).Push(32).Push(0).Op(vm.REVERT).Bytes()
)

// initCode returns code that deploys runtime.
func initCode(runtime []byte) []byte { return program.New().ReturnViaCodeCopy(runtime).Bytes() }

const jovianTime = 30 // blocks at 10, 20 (Isthmus), 30 (Jovian activation), 40, 50, 60

func l1Info(jovian bool, scalar uint16, seq uint64) []byte {
	sel := crypto.Keccak256([]byte("setL1BlockValuesIsthmus()"))[:4]
	if jovian {
		sel = crypto.Keccak256([]byte("setL1BlockValuesJovian()"))[:4]
	}
	d := append([]byte{}, sel...)
	d = binary.BigEndian.AppendUint32(d, 1368)
	d = binary.BigEndian.AppendUint32(d, 810949)
	d = binary.BigEndian.AppendUint64(d, seq)
	d = binary.BigEndian.AppendUint64(d, 1700000000)
	d = binary.BigEndian.AppendUint64(d, 20000000)
	d = append(d, common.BigToHash(big.NewInt(7e9)).Bytes()...)
	d = append(d, common.BigToHash(big.NewInt(1)).Bytes()...)
	d = append(d, crypto.Keccak256([]byte("l1"))...)
	d = append(d, crypto.Keccak256([]byte("batcher"))...)
	d = binary.BigEndian.AppendUint32(d, 7)
	d = binary.BigEndian.AppendUint64(d, 1000)
	if jovian {
		d = binary.BigEndian.AppendUint16(d, scalar)
	}
	return d
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run . OUT_DIR")
		os.Exit(2)
	}
	out := os.Args[1]
	// The chain: Isthmus from genesis, Jovian from block 3. Block 5's DA footprint (scalar 20,000)
	// is above its gas used, so block 6's base fee is metered on it; block 3 sets minBaseFee 5e6
	// (clamps block 4), block 6 sets 2e9 (clamps block 7); block 7's L1-info scalar is 0.
	valid := generate([]uint16{0, 0, 0, 400, 20000, 400, 0}, 7, true)
	write(out, "jovian-chain", valid, nil)
	// The same chain with block 5's scalar at 60,000: its DA footprint exceeds the gas limit, which
	// op-geth's InsertChain refuses; the fixture keeps the refused block with op-geth's error.
	invalid := generate([]uint16{0, 0, 0, 400, 60000}, 5, false)
	write(out, "jovian-chain-over-da-limit", invalid, invalid.err)
}

type chain struct {
	cfg     *params.ChainConfig
	genesis *types.Block
	db      ethdb.Database
	blocks  []*types.Block
	err     error
}

func generate(scalarsBy []uint16, n int, mustInsert bool) chain {
	cfg := *params.OptimismTestConfig
	jt := uint64(jovianTime)
	cfg.JovianTime = &jt
	cfg.ChainID = big.NewInt(901)
	key, _ := crypto.HexToECDSA("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	sender := crypto.PubkeyToAddress(key.PublicKey)
	// L1Block storage: l1BaseFee (slot 1), scalars (slot 3), blobBaseFee (slot 7), operator fee (slot 8).
	scalars := common.Hash{}
	binary.BigEndian.PutUint32(scalars[16:20], 1368)
	binary.BigEndian.PutUint32(scalars[20:24], 810949)
	opfee := common.Hash{}
	binary.BigEndian.PutUint32(opfee[20:24], 7)
	binary.BigEndian.PutUint64(opfee[24:32], 1000)
	gspec := &core.Genesis{
		Config:    &cfg,
		GasLimit:  30_000_000,
		BaseFee:   big.NewInt(1_000_000),
		ExtraData: eip1559.EncodeHoloceneExtraData(250, 6),
		Alloc: types.GenesisAlloc{
			sender: {Balance: new(big.Int).Mul(big.NewInt(1e18), big.NewInt(100))},
			l1Block: {Nonce: 1, Balance: big.NewInt(0), Storage: map[common.Hash]common.Hash{
				common.BigToHash(big.NewInt(1)): common.BigToHash(big.NewInt(7e9)),
				common.BigToHash(big.NewInt(3)): scalars,
				common.BigToHash(big.NewInt(7)): common.BigToHash(big.NewInt(1)),
				common.BigToHash(big.NewInt(8)): opfee,
			}},
		},
	}
	signer := types.LatestSigner(&cfg)
	nonce := uint64(0)
	key2, _ := crypto.HexToECDSA("8a1f9a8f95be41cd7ccb6168179afb4504aefe388d1e14474d32c45c72ce7b7a")
	loggerAt := crypto.CreateAddress(l1User, 0)
	var reverterAt common.Address
	minBaseFees := []uint64{0, 0, 5_000_000, 0, 0, 2_000_000_000, 0}
	engine := beacon.New(ethash.NewFaker())
	db, blocks, _ := core.GenerateChainWithGenesis(gspec, engine, n, func(i int, b *core.BlockGen) {
		t := b.Timestamp()
		jovian := cfg.IsJovian(t)
		mbf := minBaseFees[i]
		if jovian {
			b.SetExtra(eip1559.EncodeJovianExtraData(250, 6, mbf))
		} else {
			b.SetExtra(eip1559.EncodeHoloceneExtraData(250, 6))
		}
		parentJovian := cfg.IsJovian(t - 10)
		data := l1Info(parentJovian, scalarsBy[i], uint64(i))
		b.AddTx(types.NewTx(&types.DepositTx{SourceHash: crypto.Keccak256Hash(data), From: depositor, To: &l1Block, Value: big.NewInt(0), Gas: 1_000_000, Data: data}))
		if jovian && !parentJovian {
			// Activation block: deposits only. A user deposit with mint creates the logging contract.
			b.AddTx(types.NewTx(&types.DepositTx{SourceHash: crypto.Keccak256Hash([]byte("create")), From: l1User, Mint: big.NewInt(1e18), Value: big.NewInt(0), Gas: 500_000, Data: initCode(logger)}))
			return
		}
		sign := func(inner types.TxData) {
			tx, err := types.SignTx(types.NewTx(inner), signer, key)
			if err != nil {
				panic(err)
			}
			nonce++
			b.AddTx(tx)
		}
		fee := func(tx *types.DynamicFeeTx) *types.DynamicFeeTx {
			tx.ChainID, tx.Nonce, tx.GasFeeCap, tx.GasTipCap = cfg.ChainID, nonce, big.NewInt(1e10), big.NewInt(3)
			return tx
		}
		switch i {
		case 3: // a contract creation, a call that stores and logs, a call that reverts
			reverterAt = crypto.CreateAddress(sender, nonce)
			sign(fee(&types.DynamicFeeTx{Gas: 200_000, Data: initCode(reverter)}))
			sign(fee(&types.DynamicFeeTx{To: &loggerAt, Gas: 100_000}))
			sign(fee(&types.DynamicFeeTx{To: &reverterAt, Gas: 100_000}))
		case 4: // EIP-7702: the second key delegates to the logging contract, then is called; a deposit with mint and value
			auth, err := types.SignSetCode(key2, types.SetCodeAuthorization{ChainID: *uint256.MustFromBig(cfg.ChainID), Address: loggerAt, Nonce: 0})
			if err != nil {
				panic(err)
			}
			delegator := crypto.PubkeyToAddress(key2.PublicKey)
			tx, err := types.SignTx(types.NewTx(&types.SetCodeTx{ChainID: uint256.MustFromBig(cfg.ChainID), Nonce: nonce, GasTipCap: uint256.NewInt(3), GasFeeCap: uint256.NewInt(1e10), Gas: 200_000, To: delegator, Value: uint256.NewInt(0), AuthList: []types.SetCodeAuthorization{auth}}), signer, key)
			if err != nil {
				panic(err)
			}
			nonce++
			b.AddTx(tx)
			b.AddTx(types.NewTx(&types.DepositTx{SourceHash: crypto.Keccak256Hash([]byte("mint")), From: l1User, To: &recipient, Mint: big.NewInt(3e18), Value: big.NewInt(2e18), Gas: 100_000}))
		}
		for j := 0; j < 2+i; j++ {
			payload := make([]byte, 40*j*j)
			for k := range payload {
				payload[k] = byte(k*7 + j)
			}
			sign(fee(&types.DynamicFeeTx{To: &recipient, Value: big.NewInt(1), Gas: 300_000, Data: payload}))
		}
	})
	// op-geth validates the chain it made.
	bc, err := core.NewBlockChain(rawdb.NewMemoryDatabase(), gspec, engine, nil)
	if err != nil {
		panic(err)
	}
	_, insertErr := bc.InsertChain(blocks)
	if mustInsert && insertErr != nil {
		panic(fmt.Sprintf("InsertChain: %v", insertErr))
	}
	if !mustInsert && insertErr == nil {
		panic("InsertChain accepted a chain it should refuse")
	}
	return chain{cfg: &cfg, genesis: bc.GetBlockByNumber(0), db: db, blocks: blocks, err: insertErr}
}

func write(out, name string, c chain, refused error) {
	cfg, genesis, db, blocks := c.cfg, c.genesis, c.db, c.blocks
	rollupConfig := map[string]any{
		"l2_chain_id": 901, "block_time": 10, "regolith_time": 0, "canyon_time": 0, "delta_time": 0, "ecotone_time": 0,
		"fjord_time": 0, "granite_time": 0, "holocene_time": 0, "isthmus_time": 0, "jovian_time": jovianTime,
		"chain_op_config": map[string]any{"eip1559Elasticity": 6, "eip1559Denominator": 50, "eip1559DenominatorCanyon": 250},
	}
	tdb := triedb.NewDatabase(db, triedb.HashDefaults)
	for i, block := range blocks {
		if refused != nil && i != len(blocks)-1 {
			continue // only the refused block
		}
		parent := genesis.Header()
		if i > 0 {
			parent = blocks[i-1].Header()
		}
		pre := preimages(db, tdb, parent.Root)
		var txs []hexutil.Bytes
		for _, tx := range block.Transactions() {
			raw, _ := tx.MarshalBinary()
			txs = append(txs, raw)
		}
		h := block.Header()
		var minBaseFee any
		if cfg.IsJovian(h.Time) {
			_, _, m := eip1559.DecodeJovianExtraData(h.Extra)
			minBaseFee = hexutil.Uint64(*m)
		}
		expected := map[string]any{"blockHash": block.Hash(), "header": h}
		if refused != nil {
			expected["refusedByOpGeth"] = refused.Error()
		}
		fixture := map[string]any{
			"source":       "op-geth v1.101702.3 core.GenerateChain, validated by core.BlockChain.InsertChain (test/go/jovian-chain)",
			"chainId":      901,
			"blockNumber":  h.Number.Uint64(),
			"rollupConfig": rollupConfig,
			"parentHeader": parent,
			"payload": map[string]any{
				"timestamp": hexutil.Uint64(h.Time), "prevRandao": h.MixDigest, "feeRecipient": h.Coinbase,
				"parentBeaconBlockRoot": h.ParentBeaconRoot, "gasLimit": hexutil.Uint64(h.GasLimit),
				"eip1559Params": hexutil.Bytes(h.Extra[1:9]), "minBaseFee": minBaseFee, "transactions": txs,
			},
			"expected":  expected,
			"preimages": pre,
		}
		text, err := json.MarshalIndent(fixture, "", " ")
		if err != nil {
			panic(err)
		}
		file := filepath.Join(out, fmt.Sprintf("%s-%d.json", name, h.Number.Uint64()))
		if err := os.MkdirAll(out, 0o755); err != nil {
			panic(err)
		}
		if err := os.WriteFile(file, append(text, '\n'), 0o644); err != nil {
			panic(err)
		}
		fmt.Printf("%s jovian=%v txs=%d gasUsed=%d blobGasUsed=%d baseFee=%s extra=%x\n", file, cfg.IsJovian(h.Time), len(txs), h.GasUsed, *h.BlobGasUsed, h.BaseFee, h.Extra)
	}
}

func preimages(db ethdb.Database, tdb *triedb.Database, root common.Hash) map[string]hexutil.Bytes {
	out := map[string]hexutil.Bytes{}
	tr, err := trie.New(trie.StateTrieID(root), tdb)
	if err != nil {
		panic(err)
	}
	it, _ := tr.NodeIterator(nil)
	for it.Next(true) {
		if it.Hash() != (common.Hash{}) {
			out[it.Hash().Hex()] = it.NodeBlob()
		}
		if it.Leaf() {
			var acc types.StateAccount
			if err := rlp.DecodeBytes(it.LeafBlob(), &acc); err != nil {
				panic(err)
			}
			if acc.Root != types.EmptyRootHash {
				st, err := trie.New(trie.StorageTrieID(root, common.BytesToHash(it.LeafKey()), acc.Root), tdb)
				if err != nil {
					panic(err)
				}
				sit, _ := st.NodeIterator(nil)
				for sit.Next(true) {
					if sit.Hash() != (common.Hash{}) {
						out[sit.Hash().Hex()] = sit.NodeBlob()
					}
				}
			}
			if code := rawdb.ReadCode(db, common.BytesToHash(acc.CodeHash)); len(code) > 0 {
				out[crypto.Keccak256Hash(code).Hex()] = code
			}
		}
	}
	return out
}
