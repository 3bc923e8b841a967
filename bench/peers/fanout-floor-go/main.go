// The fan-out bench's floor (bench/fanout.ts, issue 17): the least work a server can do to send
// flashlog's `pendingLogs` notifications, so that flashlog's p99 can be read against what this
// machine allows, with the same client processes. It parses nothing and filters nothing: the bench
// writes each log's JSON (the notification's `result`, as flashlog's view holds it, with the µs
// stamp in `data`) as one line on stdin, and the floor writes every subscriber its notification,
// the subscriber's ready-made prefix + that line + `}}`, one WebSocket frame each. The writes run
// on one goroutine per core, each over its own share of the connections (a multi-threaded server,
// where flashlog's gateway writes from one thread).
//
// Usage: fanout-floor <host:port>. Prints `listening <port>`; a client's eth_subscribe gets
// `{"jsonrpc":"2.0","id":<id>,"result":"0x<subscription>"}`. stdin closing ends it.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"

	"github.com/gorilla/websocket"
)

type subscriber struct {
	conn   *websocket.Conn
	prefix []byte
}

type shard struct {
	mu   sync.Mutex
	subs []subscriber
	work chan []byte
	done *sync.WaitGroup
}

var suffix = []byte("}}")

func (s *shard) run() {
	frame := make([]byte, 0, 4096)
	for line := range s.work {
		s.mu.Lock()
		subs := s.subs
		s.mu.Unlock()
		for _, sub := range subs {
			frame = append(append(append(frame[:0], sub.prefix...), line...), suffix...)
			// a subscriber whose write fails is dropped from the figures by the client's own count
			_ = sub.conn.WriteMessage(websocket.TextMessage, frame)
		}
		s.done.Done()
	}
}

func main() {
	listener, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var done sync.WaitGroup
	shards := make([]*shard, runtime.NumCPU())
	for i := range shards {
		shards[i] = &shard{work: make(chan []byte, 64), done: &done}
		go shards[i].run()
	}
	var nextMu sync.Mutex
	next := 0
	upgrader := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		_, request, err := conn.ReadMessage()
		if err != nil {
			conn.Close()
			return
		}
		var call struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(request, &call) != nil {
			conn.Close()
			return
		}
		nextMu.Lock()
		next++
		id := fmt.Sprintf("0x%032x", next)
		s := shards[next%len(shards)]
		nextMu.Unlock()
		reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":"%s"}`, call.ID, id)
		prefix := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"%s","result":`, id))
		// the reply first: once registered, only the shard's goroutine writes to the connection
		// (gorilla allows one writer at a time); the bench appends only after every client has its reply
		if conn.WriteMessage(websocket.TextMessage, []byte(reply)) != nil {
			conn.Close()
			return
		}
		s.mu.Lock()
		s.subs = append(s.subs, subscriber{conn, prefix})
		s.mu.Unlock()
		// read on, so closes are seen; a connection's reads and the shard's writes may run at once
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	})
	go http.Serve(listener, handler)
	fmt.Printf("listening %d\n", listener.Addr().(*net.TCPAddr).Port)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		line := bytes.Clone(in.Bytes())
		done.Add(len(shards))
		for _, s := range shards {
			s.work <- line
		}
		done.Wait()
	}
}
