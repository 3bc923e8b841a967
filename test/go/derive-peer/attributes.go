package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"

	optypes "github.com/ethereum-optimism/optimism/op-core/types"
	"github.com/ethereum-optimism/optimism/op-node/rollup"
	"github.com/ethereum-optimism/optimism/op-node/rollup/derive"
	"github.com/ethereum-optimism/optimism/op-service/eth"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/params"
)

// attributes mode: op-node's deposit, SystemConfig, L1-info and payload-attributes code over
// synthetic L1 blocks (a header and its receipts) read as JSON on stdin, one answer per case.
// The L1 chain is Sepolia's config, so the blob base fee follows its schedule at the header's time.

type logIn struct {
	Address  common.Address `json:"address"`
	Topics   []common.Hash  `json:"topics"`
	Data     hexutil.Bytes  `json:"data"`
	LogIndex uint           `json:"logIndex"`
}

type sysCfgJSON struct {
	BatcherAddr          common.Address `json:"batcher"`
	Overhead             eth.Bytes32    `json:"overhead"`
	Scalar               eth.Bytes32    `json:"scalar"`
	GasLimit             hexutil.Uint64 `json:"gasLimit"`
	EIP1559Params        eth.Bytes8     `json:"eip1559Params"`
	OperatorFeeParams    eth.Bytes32    `json:"operatorFeeParams"`
	MinBaseFee           hexutil.Uint64 `json:"minBaseFee"`
	DAFootprintGasScalar uint16         `json:"daFootprintGasScalar"`
}

func (s sysCfgJSON) eth() eth.SystemConfig {
	return eth.SystemConfig{BatcherAddr: s.BatcherAddr, Overhead: s.Overhead, Scalar: s.Scalar, GasLimit: uint64(s.GasLimit),
		EIP1559Params: s.EIP1559Params, OperatorFeeParams: s.OperatorFeeParams, MinBaseFee: uint64(s.MinBaseFee), DAFootprintGasScalar: s.DAFootprintGasScalar}
}

func sysCfgOf(c eth.SystemConfig) sysCfgJSON {
	return sysCfgJSON{c.BatcherAddr, c.Overhead, c.Scalar, hexutil.Uint64(c.GasLimit), c.EIP1559Params, c.OperatorFeeParams, hexutil.Uint64(c.MinBaseFee), c.DAFootprintGasScalar}
}

type attributesCase struct {
	Name   string `json:"name"`
	Header struct {
		ParentHash       common.Hash     `json:"parentHash"`
		Number           hexutil.Uint64  `json:"number"`
		Time             hexutil.Uint64  `json:"timestamp"`
		BaseFee          *hexutil.Big    `json:"baseFeePerGas"`
		MixDigest        common.Hash     `json:"mixHash"`
		ExcessBlobGas    *hexutil.Uint64 `json:"excessBlobGas"`
		ParentBeaconRoot *common.Hash    `json:"parentBeaconBlockRoot"`
	} `json:"header"`
	// A whole header as an L1 RPC gives it (every field, so its hash is the L1's): used instead of
	// `header` when present.
	RPCHeader *types.Header `json:"rpcHeader"`
	Receipts  []struct {
		Status uint64  `json:"status"`
		Logs   []logIn `json:"logs"`
	} `json:"receipts"`
	SystemConfig sysCfgJSON      `json:"systemConfig"`
	SeqNumber    uint64          `json:"sequenceNumber"`
	L2Time       uint64          `json:"l2Time"`
	BatchTxs     []hexutil.Bytes `json:"batchTransactions"`
}

type configStep struct {
	LogIndex uint       `json:"logIndex"`
	Config   sysCfgJSON `json:"config"`
	Error    string     `json:"error,omitempty"`
}

type attributesAnswer struct {
	Name            string                 `json:"name"`
	Hash            common.Hash            `json:"hash"`
	BlobBaseFee     *hexutil.Big           `json:"blobBaseFee"`
	Deposits        []hexutil.Bytes        `json:"deposits"`
	DepositsError   string                 `json:"depositsError,omitempty"`
	UserDeposits    []hexutil.Bytes        `json:"userDeposits"`
	ConfigSteps     []configStep           `json:"configSteps"`
	SystemConfig    sysCfgJSON             `json:"systemConfig"`
	L1InfoDeposit   hexutil.Bytes          `json:"l1InfoDeposit,omitempty"`
	L1InfoError     string                 `json:"l1InfoError,omitempty"`
	Attributes      *eth.PayloadAttributes `json:"attributes,omitempty"`
	AttributesError string                 `json:"attributesError,omitempty"`
}

// l1Source serves one L1 block (header and receipts) and the L2 parent's SystemConfig.
type l1Source struct {
	info     eth.BlockInfo
	receipts optypes.Receipts
	sysCfg   eth.SystemConfig
}

func (s *l1Source) InfoByHash(_ context.Context, hash common.Hash) (eth.BlockInfo, error) {
	if hash != s.info.Hash() {
		return nil, fmt.Errorf("unknown L1 block %s", hash)
	}
	return s.info, nil
}
func (s *l1Source) FetchReceipts(ctx context.Context, hash common.Hash) (eth.BlockInfo, optypes.Receipts, error) {
	info, err := s.InfoByHash(ctx, hash)
	return info, s.receipts, err
}
func (s *l1Source) SystemConfigByL2Hash(context.Context, common.Hash) (eth.SystemConfig, error) {
	return s.sysCfg, nil
}

func attributes() {
	var input struct {
		Rollup rollup.Config    `json:"rollup"`
		Cases  []attributesCase `json:"cases"`
	}
	must(json.NewDecoder(os.Stdin).Decode(&input))
	cfg := &input.Rollup
	l1Config := params.SepoliaChainConfig
	var out []attributesAnswer
	for _, c := range input.Cases {
		header := &types.Header{ParentHash: c.Header.ParentHash, Number: new(big.Int).SetUint64(uint64(c.Header.Number)), Time: uint64(c.Header.Time),
			BaseFee: (*big.Int)(c.Header.BaseFee), MixDigest: c.Header.MixDigest, Difficulty: new(big.Int), ParentBeaconRoot: c.Header.ParentBeaconRoot}
		if c.Header.ExcessBlobGas != nil {
			excess, used := uint64(*c.Header.ExcessBlobGas), uint64(0)
			header.ExcessBlobGas, header.BlobGasUsed = &excess, &used
		}
		if c.RPCHeader != nil {
			header = c.RPCHeader
		}
		info := eth.HeaderBlockInfo(header)
		var receipts types.Receipts
		for _, r := range c.Receipts {
			rec := &types.Receipt{Status: r.Status}
			for _, l := range r.Logs {
				rec.Logs = append(rec.Logs, &types.Log{Address: l.Address, Topics: l.Topics, Data: l.Data, Index: l.LogIndex, BlockHash: header.Hash(), BlockNumber: header.Number.Uint64()})
			}
			receipts = append(receipts, rec)
		}
		answer := attributesAnswer{Name: c.Name, Hash: header.Hash(), BlobBaseFee: (*hexutil.Big)(info.BlobBaseFee(l1Config)), Deposits: []hexutil.Bytes{}, UserDeposits: []hexutil.Bytes{}, ConfigSteps: []configStep{}}

		deposits, err := derive.DeriveDeposits(receipts, cfg.DepositContractAddress)
		if err != nil {
			answer.DepositsError = err.Error()
		}
		answer.Deposits = append(answer.Deposits, deposits...)
		users, _ := derive.UserDeposits(receipts, cfg.DepositContractAddress)
		for _, dep := range users {
			raw, err := dep.MarshalBinary()
			must(err)
			answer.UserDeposits = append(answer.UserDeposits, raw)
		}

		// Each ConfigUpdate log of the SystemConfig contract on its own, in order, as
		// UpdateSystemConfigWithL1Receipts applies them (a failed update keeps the config).
		stepCfg := c.SystemConfig.eth()
		for _, rec := range receipts {
			if rec.Status != types.ReceiptStatusSuccessful {
				continue
			}
			for _, l := range rec.Logs {
				if l.Address != cfg.L1SystemConfigAddress || len(l.Topics) == 0 || l.Topics[0] != derive.ConfigUpdateEventABIHash {
					continue
				}
				next := stepCfg
				step := configStep{LogIndex: l.Index}
				if err := derive.ProcessSystemConfigUpdateLogEvent(&next, l, cfg, header.Time); err != nil {
					step.Error = err.Error()
				} else {
					stepCfg = next
				}
				step.Config = sysCfgOf(stepCfg)
				answer.ConfigSteps = append(answer.ConfigSteps, step)
			}
		}
		sysCfg := c.SystemConfig.eth()
		if c.SeqNumber == 0 {
			_ = derive.UpdateSystemConfigWithL1Receipts(&sysCfg, receipts, cfg, header.Time)
		}
		answer.SystemConfig = sysCfgOf(sysCfg)
		if raw, err := derive.L1InfoDepositBytes(cfg, l1Config, sysCfg, c.SeqNumber, info, c.L2Time); err != nil {
			answer.L1InfoError = err.Error()
		} else {
			answer.L1InfoDeposit = raw
		}

		// The whole of PreparePayloadAttributes, on an L2 parent one block time earlier whose L1
		// origin is this block's parent (sequence number 0) or this block (later ones).
		source := &l1Source{info: info, receipts: optypes.FromGethReceipts(receipts), sysCfg: c.SystemConfig.eth()}
		parent := eth.L2BlockRef{Time: c.L2Time - cfg.BlockTime, L1Origin: eth.BlockID{Hash: header.ParentHash, Number: header.Number.Uint64() - 1}}
		if c.SeqNumber > 0 {
			parent.L1Origin = eth.BlockID{Hash: header.Hash(), Number: header.Number.Uint64()}
			parent.SequenceNumber = c.SeqNumber - 1
		}
		builder := derive.NewFetchingAttributesBuilder(cfg, l1Config, nil, source, source)
		attrs, err := builder.PreparePayloadAttributes(context.Background(), parent, eth.BlockID{Hash: header.Hash(), Number: header.Number.Uint64()})
		if err != nil {
			answer.AttributesError = err.Error()
		} else {
			for _, tx := range c.BatchTxs { // the attributes queue appends the batch's transactions
				attrs.Transactions = append(attrs.Transactions, eth.Data(tx))
			}
			answer.Attributes = attrs
		}
		out = append(out, answer)
	}
	result, err := json.Marshal(out)
	must(err)
	fmt.Println(string(result))
}
