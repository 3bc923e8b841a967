package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"

	"github.com/ethereum-optimism/optimism/op-node/rollup"
	"github.com/ethereum-optimism/optimism/op-node/rollup/derive"
	"github.com/ethereum-optimism/optimism/op-service/eth"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/log"
	"github.com/ethereum/go-ethereum/params"
)

// checkbatch mode: op-node's CheckBatch over singular and span batches, each against L1 blocks from the
// current epoch on, an L2 safe head and the L1 block that included it. Prints one verdict per
// case: drop, accept, undecided, future or past.

type blockRef struct {
	Hash      common.Hash `json:"hash"`
	Number    uint64      `json:"number"`
	Timestamp uint64      `json:"timestamp"`
}

type spanBlock struct {
	Timestamp    uint64          `json:"timestamp"`
	EpochNumber  uint64          `json:"epochNumber"`
	Transactions []hexutil.Bytes `json:"transactions"`
}

type checkCase struct {
	L1Blocks []blockRef `json:"l1Blocks"`
	SafeHead struct {
		blockRef
		L1OriginNumber uint64 `json:"l1OriginNumber"`
	} `json:"safeHead"`
	Inclusion blockRef `json:"inclusion"`
	// SafeBlocks are the safe chain's blocks a span batch may overlap.
	SafeBlocks []safeBlock `json:"safeBlocks"`
	// Span, when set, is the batch checked (a span batch); else Batch (a singular batch).
	Span *struct {
		ParentCheck   hexutil.Bytes `json:"parentCheck"`
		L1OriginCheck hexutil.Bytes `json:"l1OriginCheck"`
		Blocks        []spanBlock   `json:"blocks"`
	} `json:"span"`
	Batch struct {
		ParentHash   common.Hash     `json:"parentHash"`
		EpochNumber  uint64          `json:"epochNumber"`
		EpochHash    common.Hash     `json:"epochHash"`
		Timestamp    uint64          `json:"timestamp"`
		Transactions []hexutil.Bytes `json:"transactions"`
	} `json:"batch"`
}

type safeBlock struct {
	blockRef
	L1OriginNumber uint64          `json:"l1OriginNumber"`
	Transactions   []hexutil.Bytes `json:"transactions"`
}

// safeChain serves the case's safe blocks; a payload opens with the L1-info deposit op-node builds
// for the block's L1 origin (PayloadToBlockRef reads the origin from it). An unknown block is an
// error, which leaves the batch undecided.
type safeChain struct {
	cfg    *rollup.Config
	blocks []safeBlock
}

func (s safeChain) find(n uint64) (safeBlock, error) {
	for _, b := range s.blocks {
		if b.Number == n {
			return b, nil
		}
	}
	return safeBlock{}, errors.New("unknown safe block")
}

func (s safeChain) L2BlockRefByNumber(_ context.Context, n uint64) (eth.L2BlockRef, error) {
	b, err := s.find(n)
	return eth.L2BlockRef{Hash: b.Hash, Number: b.Number, Time: b.Timestamp, L1Origin: eth.BlockID{Number: b.L1OriginNumber}}, err
}

func (s safeChain) PayloadByNumber(_ context.Context, n uint64) (*eth.ExecutionPayloadEnvelope, error) {
	b, err := s.find(n)
	if err != nil {
		return nil, err
	}
	origin := eth.HeaderBlockInfo(&types.Header{Number: new(big.Int).SetUint64(b.L1OriginNumber), BaseFee: big.NewInt(1), Difficulty: new(big.Int)})
	info, err := derive.L1InfoDepositBytes(s.cfg, params.SepoliaChainConfig, eth.SystemConfig{}, 0, origin, b.Timestamp)
	must(err)
	txs := []eth.Data{info}
	for _, tx := range b.Transactions {
		txs = append(txs, eth.Data(tx))
	}
	return &eth.ExecutionPayloadEnvelope{ExecutionPayload: &eth.ExecutionPayload{BlockHash: b.Hash, BlockNumber: eth.Uint64Quantity(b.Number),
		Timestamp: eth.Uint64Quantity(b.Timestamp), Transactions: txs}}, nil
}

var verdicts = map[derive.BatchValidity]string{derive.BatchDrop: "drop", derive.BatchAccept: "accept", derive.BatchUndecided: "undecided", derive.BatchFuture: "future", derive.BatchPast: "past"}

func checkBatch() {
	var input struct {
		Rollup rollup.Config `json:"rollup"`
		Cases  []checkCase   `json:"cases"`
	}
	must(json.NewDecoder(os.Stdin).Decode(&input))
	logger := log.NewLogger(log.DiscardHandler())
	out := []string{}
	for _, c := range input.Cases {
		var l1 []eth.L1BlockRef
		for _, b := range c.L1Blocks {
			l1 = append(l1, eth.L1BlockRef{Hash: b.Hash, Number: b.Number, Time: b.Timestamp})
		}
		safe := eth.L2BlockRef{Hash: c.SafeHead.Hash, Number: c.SafeHead.Number, Time: c.SafeHead.Timestamp, L1Origin: eth.BlockID{Number: c.SafeHead.L1OriginNumber}}
		var batch derive.Batch = &derive.SingularBatch{ParentHash: c.Batch.ParentHash, EpochNum: rollup.Epoch(c.Batch.EpochNumber), EpochHash: c.Batch.EpochHash,
			Timestamp: c.Batch.Timestamp, Transactions: c.Batch.Transactions}
		if c.Span != nil {
			span := &derive.SpanBatch{ChainID: input.Rollup.L2ChainID}
			copy(span.ParentCheck[:], c.Span.ParentCheck)
			copy(span.L1OriginCheck[:], c.Span.L1OriginCheck)
			for _, b := range c.Span.Blocks {
				span.Batches = append(span.Batches, &derive.SpanBatchElement{EpochNum: rollup.Epoch(b.EpochNumber), Timestamp: b.Timestamp, Transactions: b.Transactions})
			}
			batch = span
		}
		inclusion := eth.L1BlockRef{Hash: c.Inclusion.Hash, Number: c.Inclusion.Number, Time: c.Inclusion.Timestamp}
		validity := derive.CheckBatch(context.Background(), &input.Rollup, logger, l1, safe, &derive.BatchWithL1InclusionBlock{Batch: batch, L1InclusionBlock: inclusion}, safeChain{cfg: &input.Rollup, blocks: c.SafeBlocks})
		verdict, ok := verdicts[validity]
		if !ok {
			panic(fmt.Sprintf("unknown batch validity %d", validity))
		}
		out = append(out, verdict)
	}
	result, err := json.Marshal(out)
	must(err)
	fmt.Println(string(result))
}
