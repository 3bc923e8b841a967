// derive-peer: the OP Stack's own derivation code (op-node/rollup/derive, from the Go module
// proxy) as a test peer for flashlog's decoder (src/derive).
//
//	derive-peer encode   prints channels op-node encodes (singular and span batches, zlib and
//	                     brotli, split into frames over batcher transactions, one also in a blob)
//	                     with the batches they hold, as JSON
//	derive-peer decode   reads {chain, fjord, batcherData[], blobs[]} as JSON on stdin and prints
//	                     the batches op-node decodes from them
//	derive-peer beacon   reads {url, time, hashes} as JSON on stdin and fetches those blobs from a
//	                     beacon API as op-node's L1BeaconClient does
//	derive-peer bank     reads scenarios of batcher transactions in L1 blocks and prints the
//	                     channels op-node's channel bank (or Holocene assembler) hands out
//	derive-peer attributes  reads synthetic L1 blocks (header, receipts with TransactionDeposited
//	                     and ConfigUpdate logs) and prints op-node's deposits, SystemConfig
//	                     updates, L1-info deposit and payload attributes for them
//	derive-peer checkbatch  prints op-node's verdict (CheckBatch) on singular batches against
//	                     L1 blocks, a safe head and an inclusion block
package main

import (
	"bytes"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"

	"github.com/ethereum-optimism/optimism/op-node/rollup"
	"github.com/ethereum-optimism/optimism/op-node/rollup/derive"
	"github.com/ethereum-optimism/optimism/op-service/eth"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rlp"
	"github.com/holiman/uint256"
)

type chainJSON struct {
	ChainID     uint64 `json:"chainId"`
	GenesisTime uint64 `json:"genesisTime"`
	BlockTime   uint64 `json:"blockTime"`
}

type blockJSON struct {
	Timestamp    uint64          `json:"timestamp"`
	EpochNumber  uint64          `json:"epochNumber"`
	Transactions []hexutil.Bytes `json:"transactions"`
}

type batchJSON struct {
	Type          string      `json:"type"`
	ParentHash    string      `json:"parentHash,omitempty"`
	EpochHash     string      `json:"epochHash,omitempty"`
	ParentCheck   string      `json:"parentCheck,omitempty"`
	L1OriginCheck string      `json:"l1OriginCheck,omitempty"`
	Blocks        []blockJSON `json:"blocks"`
	Error         string      `json:"error,omitempty"`
}

type caseJSON struct {
	Name        string          `json:"name"`
	Compression string          `json:"compression"`
	ChannelID   string          `json:"channelId"`
	BatcherData []hexutil.Bytes `json:"batcherData"`
	Blobs       []hexutil.Bytes `json:"blobs,omitempty"`
	Batches     []batchJSON     `json:"batches"`
}

var chain = chainJSON{ChainID: 901, GenesisTime: 1_700_000_000, BlockTime: 2}

func key(i int) *ecdsa.PrivateKey {
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte(fmt.Sprintf("derive-peer key %d", i))))
	must(err)
	return k
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// transactions signs one of each type a span batch carries, for block i.
func transactions(i int) [][]byte {
	chainID := new(big.Int).SetUint64(chain.ChainID)
	to := common.HexToAddress(fmt.Sprintf("0x%040x", 0x4200+i))
	latest := types.LatestSignerForChainID(chainID)
	var out [][]byte
	add := func(tx *types.Transaction, err error) {
		must(err)
		raw, err := tx.MarshalBinary()
		must(err)
		out = append(out, raw)
	}
	nonce := uint64(i * 10)
	add(types.SignNewTx(key(1), latest, &types.LegacyTx{Nonce: nonce, GasPrice: big.NewInt(1_000_000_000), Gas: 21_000, To: &to, Value: big.NewInt(int64(i + 1))}))
	add(types.SignNewTx(key(2), types.HomesteadSigner{}, &types.LegacyTx{Nonce: nonce + 1, GasPrice: big.NewInt(7), Gas: 50_000, Data: []byte{0x60, 0x00}}))
	add(types.SignNewTx(key(3), latest, &types.AccessListTx{ChainID: chainID, Nonce: nonce + 2, GasPrice: big.NewInt(3), Gas: 60_000, To: &to,
		AccessList: types.AccessList{{Address: to, StorageKeys: []common.Hash{common.BigToHash(big.NewInt(int64(i)))}}}}))
	add(types.SignNewTx(key(4), latest, &types.DynamicFeeTx{ChainID: chainID, Nonce: nonce + 3, GasTipCap: big.NewInt(1_000_000), GasFeeCap: big.NewInt(2_000_000_000), Gas: 100_000, To: &to, Data: bytes.Repeat([]byte{byte(i)}, 40+i)}))
	auth, err := types.SignSetCode(key(6), types.SetCodeAuthorization{ChainID: *uint256.NewInt(chain.ChainID), Address: common.HexToAddress("0xabc"), Nonce: uint64(i)})
	must(err)
	add(types.SignNewTx(key(5), latest, &types.SetCodeTx{ChainID: uint256.NewInt(chain.ChainID), Nonce: nonce + 4, GasTipCap: uint256.NewInt(1), GasFeeCap: uint256.NewInt(2_000_000_000), Gas: 80_000, To: to, AuthList: []types.SetCodeAuthorization{auth}}))
	return out[:1+i%len(out)] // blocks of 1..5 transactions
}

// singularBatches are consecutive L2 blocks, the L1 origin advancing every third block.
func singularBatches(n int) ([]*derive.SingularBatch, []uint64) {
	var batches []*derive.SingularBatch
	var seq []uint64
	for i := 0; i < n; i++ {
		epoch := uint64(100 + i/3)
		var txs []hexutil.Bytes
		for _, tx := range transactions(i) {
			txs = append(txs, tx)
		}
		batches = append(batches, &derive.SingularBatch{
			ParentHash:   common.BytesToHash(crypto.Keccak256([]byte(fmt.Sprintf("parent %d", i)))),
			EpochNum:     rollup.Epoch(epoch),
			EpochHash:    common.BytesToHash(crypto.Keccak256([]byte(fmt.Sprintf("epoch %d", epoch)))),
			Timestamp:    chain.GenesisTime + 1000 + uint64(i)*chain.BlockTime,
			Transactions: txs,
		})
		seq = append(seq, uint64(i%3))
	}
	return batches, seq
}

// channel compresses batches as op-node's channel compressor does and splits it into frames, two per batcher transaction.
func channel(id derive.ChannelID, algo derive.CompressionAlgo, batches []*derive.BatchData, frameSize int) ([]hexutil.Bytes, []byte) {
	compressor, err := derive.NewChannelCompressor(algo)
	must(err)
	for _, batch := range batches {
		must(rlp.Encode(compressor, batch))
	}
	must(compressor.Close())
	compressed := bytes.Clone(compressor.GetCompressed().Bytes())
	var frames []derive.Frame
	for start, n := 0, 0; start < len(compressed); n++ {
		end := min(start+frameSize, len(compressed))
		frames = append(frames, derive.Frame{ID: id, FrameNumber: uint16(n), Data: compressed[start:end], IsLast: end == len(compressed)})
		start = end
	}
	var out []hexutil.Bytes
	for i := 0; i < len(frames); i += 2 {
		buf := bytes.NewBuffer([]byte{0})
		for _, frame := range frames[i:min(i+2, len(frames))] {
			must(frame.MarshalBinary(buf))
		}
		out = append(out, buf.Bytes())
	}
	return out, compressed
}

func singularJSON(b *derive.SingularBatch) batchJSON {
	return batchJSON{Type: "singular", ParentHash: b.ParentHash.Hex(), EpochHash: b.EpochHash.Hex(),
		Blocks: []blockJSON{{Timestamp: b.Timestamp, EpochNumber: uint64(b.EpochNum), Transactions: b.Transactions}}}
}

func spanJSON(b *derive.SpanBatch) batchJSON {
	out := batchJSON{Type: "span", ParentCheck: hexutil.Encode(b.ParentCheck[:]), L1OriginCheck: hexutil.Encode(b.L1OriginCheck[:]), Blocks: []blockJSON{}}
	for _, element := range b.Batches {
		out.Blocks = append(out.Blocks, blockJSON{Timestamp: element.Timestamp, EpochNumber: uint64(element.EpochNum), Transactions: element.Transactions})
	}
	return out
}

func rollupConfig(c chainJSON) *rollup.Config {
	return &rollup.Config{BlockTime: c.BlockTime, Genesis: rollup.Genesis{L2Time: c.GenesisTime}, L2ChainID: new(big.Int).SetUint64(c.ChainID)}
}

func encode() {
	var cases []caseJSON
	for n, algo := range []derive.CompressionAlgo{derive.Zlib, derive.Brotli} {
		singular, seq := singularBatches(7)
		var data []*derive.BatchData
		var expected []batchJSON
		for _, b := range singular {
			data = append(data, derive.NewBatchData(b))
			expected = append(expected, singularJSON(b))
		}
		id := derive.ChannelID{byte(0x10 + n)}
		frames, _ := channel(id, algo, data, 700)
		cases = append(cases, caseJSON{Name: "singular-" + string(algo), Compression: string(algo), ChannelID: hexutil.Encode(id[:]), BatcherData: frames, Batches: expected})

		span := derive.NewSpanBatch(chain.GenesisTime, new(big.Int).SetUint64(chain.ChainID))
		for i, b := range singular {
			must(span.AppendSingularBatch(b, seq[i]))
		}
		raw, err := span.ToRawSpanBatch()
		must(err)
		// What op-node reads back from the span batch it wrote is the expected answer.
		var buf bytes.Buffer
		must(rlp.Encode(&buf, derive.NewBatchData(raw)))
		var decoded derive.BatchData
		must(rlp.Decode(&buf, &decoded))
		derived, err := derive.DeriveSpanBatch(&decoded, rollupConfig(chain))
		must(err)
		id = derive.ChannelID{byte(0x20 + n)}
		frames, compressed := channel(id, algo, []*derive.BatchData{derive.NewBatchData(raw)}, 500)
		c := caseJSON{Name: "span-" + string(algo), Compression: string(algo), ChannelID: hexutil.Encode(id[:]), BatcherData: frames, Batches: []batchJSON{spanJSON(derived)}}
		if algo == derive.Brotli {
			// The same channel as one frame in one blob.
			whole := bytes.NewBuffer([]byte{0})
			must((&derive.Frame{ID: id, Data: compressed, IsLast: true}).MarshalBinary(whole))
			var blob eth.Blob
			must(blob.FromData(whole.Bytes()))
			c.Blobs = []hexutil.Bytes{blob[:]}
		}
		cases = append(cases, c)
	}
	out, err := json.Marshal(map[string]any{"chain": chain, "cases": cases})
	must(err)
	fmt.Println(string(out))
}

type decodeInput struct {
	Chain       chainJSON       `json:"chain"`
	Fjord       bool            `json:"fjord"`
	BatcherData []hexutil.Bytes `json:"batcherData"`
	Blobs       []hexutil.Bytes `json:"blobs"`
}

type channelJSON struct {
	ID      string      `json:"id"`
	Batches []batchJSON `json:"batches"`
	Error   string      `json:"error,omitempty"`
}

func decode() {
	var input decodeInput
	must(json.NewDecoder(os.Stdin).Decode(&input))
	cfg := rollupConfig(input.Chain)
	data := input.BatcherData
	var errs []string
	for i, b := range input.Blobs {
		var blob eth.Blob
		copy(blob[:], b)
		d, err := blob.ToData()
		if err != nil {
			errs = append(errs, fmt.Sprintf("blob %d: %v", i, err))
			continue
		}
		data = append(data, hexutil.Bytes(d))
	}
	channels := map[derive.ChannelID]*derive.Channel{}
	var out []channelJSON
	for i, d := range data {
		frames, err := derive.ParseFrames(d)
		if err != nil {
			errs = append(errs, fmt.Sprintf("batcher data %d: %v", i, err))
			continue
		}
		for _, frame := range frames {
			ch, ok := channels[frame.ID]
			if !ok {
				ch = derive.NewChannel(frame.ID, eth.L1BlockRef{}, false)
				channels[frame.ID] = ch
			}
			if err := ch.AddFrame(frame, eth.L1BlockRef{}); err != nil {
				errs = append(errs, fmt.Sprintf("frame %x:%d: %v", frame.ID[:], frame.FrameNumber, err))
				continue
			}
			if ch.IsReady() {
				delete(channels, frame.ID)
				out = append(out, readChannel(ch, cfg, input.Fjord))
			}
		}
	}
	result, err := json.Marshal(map[string]any{"channels": out, "errors": errs})
	must(err)
	fmt.Println(string(result))
}

func readChannel(ch *derive.Channel, cfg *rollup.Config, fjord bool) channelJSON {
	id := ch.ID()
	out := channelJSON{ID: hexutil.Encode(id[:]), Batches: []batchJSON{}}
	next, err := derive.BatchReader(ch.Reader(), 100_000_000, fjord)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	for {
		data, err := next()
		if errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			out.Error = err.Error()
			return out
		}
		switch data.GetBatchType() {
		case derive.SingularBatchType:
			batch, err := derive.GetSingularBatch(data)
			must(err)
			out.Batches = append(out.Batches, singularJSON(batch))
		case derive.SpanBatchType:
			batch, err := derive.DeriveSpanBatch(data, cfg)
			if err != nil {
				out.Batches = append(out.Batches, batchJSON{Type: "span", Error: err.Error(), Blocks: []blockJSON{}})
				continue
			}
			out.Batches = append(out.Batches, spanJSON(batch))
		}
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: derive-peer encode|decode|bank|beacon|attributes|checkbatch")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "encode":
		encode()
	case "decode":
		decode()
	case "bank":
		bank()
	case "attributes":
		attributes()
	case "checkbatch":
		checkBatch()
	case "beacon":
		beacon()
	default:
		fmt.Fprintln(os.Stderr, "usage: derive-peer encode|decode|bank|beacon|attributes|checkbatch")
		os.Exit(2)
	}
}
