package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ethereum-optimism/optimism/op-node/rollup"
	"github.com/ethereum-optimism/optimism/op-node/rollup/derive"
	"github.com/ethereum-optimism/optimism/op-service/eth"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/log"
)

// bank mode: op-node's frame queue and channel bank (before Holocene) or channel assembler (from
// Holocene) over scenarios of batcher transactions in L1 blocks, printing the channels they hand
// out, in order. The L1 origin advances between blocks as the pipeline's traversal does: a stage
// sees the new block before it reads that block's data.

type bankScenario struct {
	Fork   string `json:"fork"`
	Blocks []struct {
		Number uint64          `json:"number"`
		Txs    []hexutil.Bytes `json:"txs"`
	} `json:"blocks"`
}

type readyChannel struct {
	Data hexutil.Bytes `json:"data"`
}

// blockData hands out one L1 block's batcher transactions, then io.EOF until the next block.
type blockData struct {
	origin eth.L1BlockRef
	txs    []hexutil.Bytes
}

func (d *blockData) NextData(context.Context) ([]byte, error) {
	if len(d.txs) == 0 {
		return nil, io.EOF
	}
	next := d.txs[0]
	d.txs = d.txs[1:]
	return next, nil
}

func (d *blockData) Origin() eth.L1BlockRef { return d.origin }

type noMetrics struct{}

func (noMetrics) RecordL1Ref(string, eth.L1BlockRef) {}
func (noMetrics) RecordL2Ref(string, eth.L2BlockRef) {}
func (noMetrics) RecordChannelInputBytes(int)        {}
func (noMetrics) RecordHeadChannelOpened()           {}
func (noMetrics) RecordChannelTimedOut()             {}
func (noMetrics) RecordFrame()                       {}
func (noMetrics) RecordDerivedBatches(string)        {}
func (noMetrics) SetDerivationIdle(bool)             {}
func (noMetrics) RecordPipelineReset()               {}

func forkConfig(fork string) *rollup.Config {
	zero := uint64(0)
	cfg := &rollup.Config{ChannelTimeoutBedrock: 300, BlockTime: 2}
	order := []string{"bedrock", "canyon", "delta", "ecotone", "fjord", "granite", "holocene"}
	fields := []**uint64{nil, &cfg.CanyonTime, &cfg.DeltaTime, &cfg.EcotoneTime, &cfg.FjordTime, &cfg.GraniteTime, &cfg.HoloceneTime}
	cfg.RegolithTime = &zero
	for i, name := range order {
		if fields[i] != nil {
			*fields[i] = &zero
		}
		if name == fork {
			return cfg
		}
	}
	panic(fmt.Sprintf("unknown fork %q", fork))
}

func runScenario(s bankScenario) []readyChannel {
	cfg := forkConfig(s.Fork)
	logger := log.NewLogger(log.DiscardHandler())
	source := &blockData{}
	frames := derive.NewFrameQueue(logger, cfg, source)
	var stage derive.RawChannelProvider
	if cfg.HoloceneTime != nil {
		stage = derive.NewChannelAssembler(logger, rollup.NewChainSpec(cfg), frames, noMetrics{})
	} else {
		stage = derive.NewChannelBank(logger, rollup.NewChainSpec(cfg), frames, noMetrics{})
	}
	out := []readyChannel{}
	for _, block := range s.Blocks {
		source.origin = eth.L1BlockRef{Number: block.Number, Time: block.Number * 12}
		source.txs = append(source.txs[:0], block.Txs...)
		for {
			data, err := stage.NextRawChannel(context.Background())
			if errors.Is(err, io.EOF) {
				break
			} else if errors.Is(err, derive.NotEnoughData) {
				continue
			} else if err != nil {
				panic(err)
			}
			if data != nil {
				out = append(out, readyChannel{Data: data})
			}
		}
	}
	return out
}

func bank() {
	var scenarios []bankScenario
	must(json.NewDecoder(os.Stdin).Decode(&scenarios))
	results := make([][]readyChannel, 0, len(scenarios))
	for _, s := range scenarios {
		results = append(results, runScenario(s))
	}
	out, err := json.Marshal(results)
	must(err)
	fmt.Println(string(out))
}
