package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/ethereum-optimism/optimism/op-service/client"
	"github.com/ethereum-optimism/optimism/op-service/sources"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/log"
)

type beaconInput struct {
	URL    string        `json:"url"`
	Time   uint64        `json:"time"`
	Hashes []common.Hash `json:"hashes"`
}

// beacon reads {url, time, hashes} on stdin and fetches the blobs of the L1 block at `time` by
// their versioned hashes as op-node does (op-service's L1BeaconClient: genesis and spec for the
// slot, then the blobs endpoint, each blob's KZG commitment checked against its hash). It prints
// {blobs, data} (each blob's decoded batcher data) or {error}.
func beacon() {
	var input beaconInput
	must(json.NewDecoder(os.Stdin).Decode(&input))
	logger := log.NewLogger(log.DiscardHandler())
	cl := sources.NewL1BeaconClient(sources.NewBeaconHTTPClient(client.NewBasicHTTPClient(input.URL, logger)), sources.L1BeaconClientConfig{})
	out := map[string]any{}
	blobs, err := cl.GetBlobsByHash(context.Background(), input.Time, input.Hashes)
	if err != nil {
		out["error"] = err.Error()
	} else {
		var raw, data []hexutil.Bytes
		for i, blob := range blobs {
			raw = append(raw, blob[:])
			d, err := blob.ToData()
			if err != nil {
				out["error"] = fmt.Sprintf("blob %d: %v", i, err)
				break
			}
			data = append(data, hexutil.Bytes(d))
		}
		out["blobs"] = raw
		out["data"] = data
	}
	result, err := json.Marshal(out)
	must(err)
	fmt.Println(string(result))
}
