// One client process of the fan-out bench (bench/fanout.ts), in Go so that the subscribers cost
// the shared cores less than Node clients do and the comparison of the servers stays fair (the
// same client for flashlog and for Base's websocket-proxy). It does what fanout-client.ts does:
// holds `count` WebSocket connections to one server and records, per message, the time from the
// append (the µs stamp the bench wrote into the log's data field, CLOCK_MONOTONIC, shared by every
// process on the machine) to the message read here (checked as JSON whole, the stamp then found by
// its key: lighter than fanout-client.ts's JSON.parse, which builds every object).
//
//	mode pendingLogs / logs: eth_subscribe(mode) on each connection; the stamp is the log's `data`.
//	mode proxy: no request; the stamp is the first log's `data` of the frame's first receipt.
//
// Usage: fanout-client <url> <count> <mode>. Prints `ready <subscribed> <failed>` once every
// connection is subscribed (or failed); then each `report` line on stdin is answered with one line
// `<cpuUs> <latency µs>,<latency µs>,...` (the latencies and this process's CPU time since the
// last report, then starts over). stdin closing ends it.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/gorilla/websocket"
)

// monotonicUs: CLOCK_MONOTONIC in µs, as Node's process.hrtime reads it. Go's own monotonic clock is
// CLOCK_MONOTONIC too, but not readable as an absolute value: it is offset by one clock_gettime read.
var base = time.Now()
var offsetUs = func() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()/1000 - time.Since(base).Microseconds()
}()

func monotonicUs() int64 { return time.Since(base).Microseconds() + offsetUs }

var (
	mu        sync.Mutex
	latencies []int64
)

var (
	replyStart = []byte(`{"jsonrpc":"2.0","id":`)
	logsKey    = []byte(`"logs":[`)
	dataKey    = []byte(`"data":"0x`)
)

// stampOf checks the message is JSON (encoding/json's validator, no reflection) and reads the stamp:
// the log's data (a notification), or the first log's data after the first `"logs":[` (a proxy
// frame: the block record's first receipt). reply: the answer to eth_subscribe.
func stampOf(data []byte, mode string) (stamp int64, ok bool, reply bool) {
	if !json.Valid(data) {
		return 0, false, false
	}
	if bytes.HasPrefix(data, replyStart) {
		return 0, false, true
	}
	from := 0
	if mode == "proxy" {
		if from = bytes.Index(data, logsKey); from < 0 {
			return 0, false, false
		}
	}
	at := bytes.Index(data[from:], dataKey)
	if at < 0 {
		return 0, false, false
	}
	hex := data[from+at+len(dataKey):]
	end := bytes.IndexByte(hex, '"')
	if end < 0 {
		return 0, false, false
	}
	digits := strings.TrimLeft(string(hex[:end]), "0")
	if digits == "" {
		return 0, true, false
	}
	value, err := strconv.ParseInt(digits, 16, 64)
	if err != nil {
		return 0, false, false
	}
	return value, true, false
}

func cpuUs() int64 {
	var usage syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	return usage.Utime.Nano()/1000 + usage.Stime.Nano()/1000
}

func main() {
	url, mode := os.Args[1], os.Args[3]
	count, _ := strconv.Atoi(os.Args[2])
	dialer := websocket.Dialer{HandshakeTimeout: 30 * time.Second}
	var ready sync.WaitGroup
	var subscribed, broken int64
	var countMu sync.Mutex
	conns := make([]*websocket.Conn, 0, count)
	// at most 200 handshakes in flight, so the server's accept queue never overflows
	slots := make(chan struct{}, 200)
	ready.Add(count)
	for i := 0; i < count; i++ {
		slots <- struct{}{}
		go func() {
			done := func(ok bool) {
				countMu.Lock()
				if ok {
					subscribed++
				} else {
					broken++
				}
				countMu.Unlock()
				<-slots
				ready.Done()
			}
			conn, _, err := dialer.Dial(url, nil)
			if err != nil {
				done(false)
				return
			}
			countMu.Lock()
			conns = append(conns, conn)
			countMu.Unlock()
			if mode != "proxy" {
				request := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["%s"]}`, mode)
				if conn.WriteMessage(websocket.TextMessage, []byte(request)) != nil {
					done(false)
					return
				}
			} else {
				done(true)
			}
			first := mode != "proxy"
			for {
				_, data, err := conn.ReadMessage()
				if err != nil {
					if first {
						done(false)
					}
					return
				}
				stamp, ok, reply := stampOf(data, mode)
				if reply && first {
					first = false
					done(true)
					continue
				}
				if ok {
					latency := monotonicUs() - stamp
					mu.Lock()
					latencies = append(latencies, latency)
					mu.Unlock()
				}
			}
		}()
	}
	ready.Wait()
	from := cpuUs()
	fmt.Printf("ready %d %d\n", subscribed, broken)
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	for in.Scan() {
		if in.Text() != "report" {
			continue
		}
		now := cpuUs()
		mu.Lock()
		taken := latencies
		latencies = nil
		mu.Unlock()
		parts := make([]string, len(taken))
		for i, latency := range taken {
			parts[i] = strconv.FormatInt(latency, 10)
		}
		fmt.Fprintf(out, "%d %s\n", now-from, strings.Join(parts, ","))
		out.Flush()
		from = now
	}
	for _, conn := range conns {
		conn.Close()
	}
}
