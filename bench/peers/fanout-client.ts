import WebSocket from 'ws';

/**
 * One client process of the fan-out bench (bench/fanout.ts): holds `count` WebSocket connections to
 * one server and records, per message, the time from the append (the µs stamp the bench wrote into
 * the log's data field, CLOCK_MONOTONIC, shared by every process on the machine) to its parse here.
 *   mode pendingLogs / logs: eth_subscribe(mode) on each connection; the stamp is the log's `data`.
 *   mode proxy: no request (websocket-proxy forwards every upstream frame to every client); the
 *   stamp is the first log's `data` of the frame's receipts (the same block record the log holds).
 * Messages: {start: {url, count, mode}} -> {ready} once all are subscribed; {report} -> {latencies, cpuUs} (the
 * latencies and this process's CPU time since the last report, then starts over); the parent going away ends it.
 */
type Start = { url: string; count: number; mode: 'pendingLogs' | 'logs' | 'proxy' };
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const latencies: number[] = [];
const sockets: WebSocket[] = [];
let failed = 0;
let cpuFrom = process.cpuUsage();

function stampOf(text: string, mode: Start['mode']): number | undefined {
  const message = JSON.parse(text) as { id?: number; params?: { result?: { data?: string } }; receipts?: { logs: { data: string }[] }[] };
  const data = mode !== 'proxy' ? message.params?.result?.data : message.receipts?.[0]?.logs[0]?.data;
  return data === undefined ? undefined : Number(BigInt(data));
}

async function start({ url, count, mode }: Start): Promise<void> {
  let ready = 0;
  await new Promise<void>((resolve) => {
    let opened = 0;
    const openNext = () => {
      // at most 200 handshakes in flight, so the server's accept queue never overflows
      while (opened < count && opened - ready - failed < 200) {
        opened++;
        const socket = new WebSocket(url, { perMessageDeflate: false });
        sockets.push(socket);
        const done = () => {
          if (ready + failed === count) resolve();
          else openNext();
        };
        socket.on('open', () => {
          if (mode !== 'proxy') socket.send(`{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["${mode}"]}`);
          else {
            ready++;
            done();
          }
        });
        socket.on('message', (data) => {
          const text = data.toString();
          if (mode !== 'proxy' && text.startsWith('{"jsonrpc":"2.0","id":1')) {
            ready++;
            done();
            return;
          }
          const stamp = stampOf(text, mode);
          if (stamp !== undefined) latencies.push(nowUs() - stamp);
        });
        socket.on('error', () => {
          failed++;
          done();
        });
      }
    };
    openNext();
  });
  cpuFrom = process.cpuUsage();
  process.send!({ ready, failed });
}

process.on('message', (message: { start?: Start; report?: true }) => {
  if (message.start) void start(message.start);
  if (message.report) {
    const cpu = process.cpuUsage(cpuFrom);
    cpuFrom = process.cpuUsage();
    process.send!({ latencies: Float64Array.from(latencies), cpuUs: cpu.user + cpu.system });
    latencies.length = 0;
  }
});
process.on('disconnect', () => {
  for (const socket of sockets) socket.terminate();
  process.exit(0);
});
