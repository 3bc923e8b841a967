// Writes the OP fee fields op-geth gives the receipts of blocks in flashlog's block-fixture format
// (shared/fixtures/op-blocks, test/fixtures/jovian-chain): for each fixture, its transactions are
// decoded with op-geth's types, their receipts derived with types.Receipts.DeriveFields under the
// fixture's rollupConfig fork times, and the OP fields marshalled as op-geth's eth_getTransactionReceipt
// does (internal/ethapi MarshalReceipt in op-geth v1.101702.3, which another module cannot import:
// the same field rules, written out below).
//
// A fixture named `bedrock:<mode>:PATH` is that block with its L1-info deposit replaced by one in the
// Bedrock form (setL1BlockValues, ABI-encoded, fee overhead 188 and scalar 684,000), read with Ecotone
// not yet active (`pre-ecotone`) or active from the block's own time (`ecotone-activation`, the one
// block that still carries the Bedrock form); the replaced deposit and the Ecotone time are written
// beside its receipts (`l1InfoDeposit`, `ecotoneTime`). `ecotone-zero-scalars:PATH` is the block
// with an Ecotone-form L1-info deposit whose two fee scalars are zero, read at the fixture's forks.
//
// Usage: go run . OUT.json FIXTURE.json...
package main

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"
)

type fixture struct {
	ChainID      uint64                 `json:"chainId"`
	BlockNumber  uint64                 `json:"blockNumber"`
	RollupConfig map[string]interface{} `json:"rollupConfig"`
	Payload      struct {
		Timestamp    string          `json:"timestamp"`
		Transactions []hexutil.Bytes `json:"transactions"`
	} `json:"payload"`
	ParentHeader struct {
		BaseFeePerGas string `json:"baseFeePerGas"`
	} `json:"parentHeader"`
}

type receiptFields struct {
	Index  int                    `json:"index"`
	Hash   common.Hash            `json:"transactionHash"`
	Fields map[string]interface{} `json:"fields"`
}

type block struct {
	Fixture       string          `json:"fixture"`
	Mode          string          `json:"mode,omitempty"`
	L1InfoDeposit hexutil.Bytes   `json:"l1InfoDeposit,omitempty"`
	EcotoneTime   *uint64         `json:"ecotoneTime,omitempty"`
	Number        uint64          `json:"blockNumber"`
	Receipts      []receiptFields `json:"receipts"`
}

// ecotoneZeroScalarsL1Info is an Ecotone-form L1-info deposit (setL1BlockValuesEcotone(), the
// packed 164 bytes of OP Stack specs ecotone/l1-attributes.md) with both fee scalars zero.
func ecotoneZeroScalarsL1Info() []byte {
	data := crypto.Keccak256([]byte("setL1BlockValuesEcotone()"))[:4]
	data = append(data, make([]byte, 8)...)                                                                       // baseFeeScalar, blobBaseFeeScalar: 0
	data = append(data, common.LeftPadBytes(big.NewInt(3).Bytes(), 8)...)                                         // sequenceNumber
	data = append(data, common.LeftPadBytes(big.NewInt(1_744_200_000).Bytes(), 8)...)                             // timestamp
	data = append(data, common.LeftPadBytes(big.NewInt(8_080_000).Bytes(), 8)...)                                 // l1BlockNumber
	data = append(data, common.LeftPadBytes(big.NewInt(30_569_165).Bytes(), 32)...)                               // basefee
	data = append(data, common.LeftPadBytes(big.NewInt(7).Bytes(), 32)...)                                        // blobBaseFee
	data = append(data, common.LeftPadBytes([]byte{0x11}, 32)...)                                                 // hash
	data = append(data, common.LeftPadBytes(common.FromHex("0x8f23bb38f531600e5d8fddaaec41f13fab46e98c"), 32)...) // batcherHash
	return deposit(data)
}

func deposit(data []byte) []byte {
	to := common.HexToAddress("0x4200000000000000000000000000000000000015")
	tx := types.NewTx(&types.DepositTx{
		SourceHash: common.HexToHash("0x01"),
		From:       common.HexToAddress("0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001"),
		To:         &to,
		Value:      big.NewInt(0),
		Gas:        1_000_000,
		Data:       data,
	})
	raw, err := tx.MarshalBinary()
	must(err)
	return raw
}

// bedrockL1Info is a Bedrock-form L1-info deposit (OP Stack specs, deposits.md "L1 Attributes
// Deposited Transaction"): setL1BlockValues(number, timestamp, basefee, hash, sequenceNumber,
// batcherHash, l1FeeOverhead, l1FeeScalar), eight ABI words after the selector.
func bedrockL1Info() []byte {
	word := func(v *big.Int) []byte { return common.LeftPadBytes(v.Bytes(), 32) }
	data := crypto.Keccak256([]byte("setL1BlockValues(uint64,uint64,uint256,bytes32,uint64,bytes32,uint256,uint256)"))[:4]
	for _, v := range []*big.Int{
		big.NewInt(20_000_000),                        // number
		big.NewInt(1_717_000_000),                     // timestamp
		big.NewInt(20_834_824_449),                    // basefee
		new(big.Int).SetBytes(common.FromHex("0x11")), // hash
		big.NewInt(3),                                 // sequenceNumber
		new(big.Int).SetBytes(common.FromHex("0x6887246668a3b87f54deb3b94ba47a6f63f32985")), // batcherHash
		big.NewInt(188),     // l1FeeOverhead
		big.NewInt(684_000), // l1FeeScalar
	} {
		data = append(data, word(v)...)
	}
	return deposit(data)
}

func forkTime(cfg map[string]interface{}, name string) *uint64 {
	v, ok := cfg[name+"_time"].(float64)
	if !ok {
		return nil
	}
	t := uint64(v)
	return &t
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: go run . OUT.json FIXTURE.json...")
		os.Exit(2)
	}
	var out []block
	for _, arg := range os.Args[2:] {
		mode, path := "", arg
		if strings.HasPrefix(arg, "bedrock:") || strings.HasPrefix(arg, "ecotone-zero-scalars:") {
			if parts := strings.SplitN(arg, ":", 3); parts[0] == "bedrock" {
				mode, path = parts[1], parts[2]
			} else {
				mode, path = parts[0], parts[1]+strings.Join(parts[2:], ":")
			}
		}
		raw, err := os.ReadFile(path)
		must(err)
		var f fixture
		must(json.Unmarshal(raw, &f))
		cfg := *params.OptimismTestConfig
		cfg.ChainID = new(big.Int).SetUint64(f.ChainID)
		zero := uint64(0)
		cfg.RegolithTime = &zero
		cfg.CanyonTime = forkTime(f.RollupConfig, "canyon")
		cfg.EcotoneTime = forkTime(f.RollupConfig, "ecotone")
		cfg.FjordTime = forkTime(f.RollupConfig, "fjord")
		cfg.GraniteTime = forkTime(f.RollupConfig, "granite")
		cfg.HoloceneTime = forkTime(f.RollupConfig, "holocene")
		cfg.IsthmusTime = forkTime(f.RollupConfig, "isthmus")
		cfg.JovianTime = forkTime(f.RollupConfig, "jovian")
		time, err := strconv.ParseUint(f.Payload.Timestamp[2:], 16, 64)
		must(err)
		b := block{Fixture: filepath.Base(path), Mode: mode, Number: f.BlockNumber}
		if mode == "ecotone-zero-scalars" {
			b.L1InfoDeposit = ecotoneZeroScalarsL1Info()
			f.Payload.Transactions[0] = b.L1InfoDeposit
		} else if mode != "" {
			b.L1InfoDeposit = bedrockL1Info()
			f.Payload.Transactions[0] = b.L1InfoDeposit
			switch mode {
			case "pre-ecotone":
				cfg.EcotoneTime, cfg.FjordTime, cfg.GraniteTime, cfg.HoloceneTime, cfg.IsthmusTime, cfg.JovianTime = nil, nil, nil, nil, nil, nil
			case "ecotone-activation":
				activation := time
				cfg.EcotoneTime = &activation
				cfg.FjordTime, cfg.GraniteTime, cfg.HoloceneTime, cfg.IsthmusTime, cfg.JovianTime = nil, nil, nil, nil, nil
				b.EcotoneTime = &activation
			default:
				must(fmt.Errorf("%s: unknown mode %q (pre-ecotone, ecotone-activation)", arg, mode))
			}
		}
		txs := make([]*types.Transaction, len(f.Payload.Transactions))
		rs := make(types.Receipts, len(txs))
		for i, b := range f.Payload.Transactions {
			txs[i] = new(types.Transaction)
			must(txs[i].UnmarshalBinary(b))
			rs[i] = &types.Receipt{Type: txs[i].Type(), TxHash: txs[i].Hash()}
		}
		must(rs.DeriveFields(&cfg, common.Hash{}, f.BlockNumber, time, big.NewInt(1), big.NewInt(1), txs))
		for i, r := range rs {
			if txs[i].IsDepositTx() {
				continue
			}
			// op-geth v1.101702.3 internal/ethapi/api.go MarshalReceipt, the OP section.
			fields := map[string]interface{}{
				"l1GasPrice": (*hexutil.Big)(r.L1GasPrice),
				"l1GasUsed":  (*hexutil.Big)(r.L1GasUsed),
				"l1Fee":      (*hexutil.Big)(r.L1Fee),
			}
			if r.FeeScalar != nil {
				fields["l1FeeScalar"] = r.FeeScalar.String()
			}
			if r.L1BlobBaseFee != nil {
				fields["l1BlobBaseFee"] = (*hexutil.Big)(r.L1BlobBaseFee)
			}
			if r.L1BaseFeeScalar != nil {
				fields["l1BaseFeeScalar"] = hexutil.Uint64(*r.L1BaseFeeScalar)
			}
			if r.L1BlobBaseFeeScalar != nil {
				fields["l1BlobBaseFeeScalar"] = hexutil.Uint64(*r.L1BlobBaseFeeScalar)
			}
			if r.OperatorFeeScalar != nil {
				fields["operatorFeeScalar"] = hexutil.Uint64(*r.OperatorFeeScalar)
			}
			if r.OperatorFeeConstant != nil {
				fields["operatorFeeConstant"] = hexutil.Uint64(*r.OperatorFeeConstant)
			}
			if r.DAFootprintGasScalar != nil {
				fields["daFootprintGasScalar"] = hexutil.Uint64(*r.DAFootprintGasScalar)
				fields["blobGasUsed"] = hexutil.Uint64(r.BlobGasUsed)
			}
			b.Receipts = append(b.Receipts, receiptFields{Index: i, Hash: txs[i].Hash(), Fields: fields})
		}
		out = append(out, b)
	}
	data, err := json.MarshalIndent(out, "", " ")
	must(err)
	must(os.WriteFile(os.Args[1], append(data, '\n'), 0o644))
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
