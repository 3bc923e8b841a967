import { z } from 'zod';
import { integer, port, bool, bytes, address, enumOf, setting, type SettingSpec } from './spec.ts';
import { networks, type NetworkName } from '../networks.ts';

const networkNames = Object.keys(networks) as [NetworkName, ...NetworkName[]];

/** Gateway: the view and the JSON-RPC server (issue 4). */
export const gatewaySettingSpecs = {
  port: setting({
    schema: port,
    default: '8547',
    expects: 'a TCP port 0-65535 (0 = any free port)',
    describe: 'JSON-RPC port (the gateway serves HTTP and WebSocket on it)',
  }),
  host: setting({ schema: z.string().min(1), default: '127.0.0.1', expects: 'a host or IP to bind', describe: 'JSON-RPC bind address' }),
  public: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe: 'public mode: per-IP rate limit, eth_getBlockReceipts refused (HTTP 403)',
  }),
  rateLimit: setting({
    schema: integer(1),
    default: '50',
    expects: 'requests per second',
    describe: 'per-client-IP request rate in --public mode (a batch counts each call)',
  }),
  maxBodyBytes: setting({
    schema: bytes,
    default: '1MiB',
    expects: 'bytes, e.g. 1048576 or 1MiB',
    describe: 'largest JSON-RPC request body',
  }),
  maxBatch: setting({ schema: integer(1, 100000), default: '100', expects: 'an integer', describe: 'most calls in one JSON-RPC batch' }),
  maxConnections: setting({ schema: integer(1), default: '10000', expects: 'an integer', describe: 'most WebSocket connections at once' }),
  maxSubscriptions: setting({
    schema: integer(1),
    default: '100',
    expects: 'an integer',
    describe: 'most subscriptions per WebSocket connection',
  }),
  maxBufferedBytes: setting({
    schema: bytes,
    default: '4MiB',
    expects: 'bytes',
    describe: 'a subscriber whose unsent data exceeds this is disconnected',
  }),
  maxLogsRange: setting({ schema: integer(1), default: '2000', expects: 'blocks', describe: 'widest eth_getLogs block range' }),
  callGasCap: setting({
    schema: integer(21000),
    default: '50000000',
    expects: 'gas',
    describe: 'most gas one eth_call or eth_estimateGas may use; the gas budget of one whole eth_simulateV1',
  }),
  callTimeoutMs: setting({
    schema: integer(1),
    default: '5000',
    expects: 'milliseconds',
    describe: 'longest one eth_call / eth_estimateGas / eth_simulateV1 may execute',
  }),
  simulateGenesis: setting({
    schema: z.string().min(1).optional(),
    expects: 'a path to a geth genesis.json',
    describe: 'eth_simulateV1: take the chain rules (fork schedule) from this genesis file instead of --simulate-hardfork',
  }),
  simulateHardfork: setting({
    schema: enumOf(['shanghai', 'cancun', 'prague', 'osaka']),
    default: 'prague',
    expects: 'shanghai|cancun|prague|osaka',
    describe: 'eth_simulateV1: the EVM rules simulated blocks run under (Base since Isthmus: prague)',
  }),
  simulateWorkers: setting({
    schema: integer(1, 64),
    default: '1',
    expects: 'an integer 1-64',
    describe: 'eth_simulateV1: worker threads simulations run on (a simulation past --call-timeout-ms is stopped with its thread)',
  }),
  viewSnapshot: setting({
    schema: z.string().optional(),
    expects: 'a file path, or "off"',
    describe:
      'where the gateway checkpoints its view so a restart replays only the log after it (default <data-dir>/view.snapshot.json; "off" disables)',
  }),
  viewSnapshotIntervalMs: setting({
    schema: integer(0),
    default: '10000',
    expects: 'milliseconds, 0 to write only once replayed and at shutdown',
    describe: 'how often the gateway writes its view snapshot',
  }),
  headPollMs: setting({
    schema: integer(0),
    default: '100',
    expects: 'milliseconds, 0 to disable (pending reads then ask the node its head each)',
    describe:
      'how often the gateway asks the node its head (every 10x that, at least 2 s, beside --rpc-ws newHeads): pending is held against it, and pending blocks that became canonical are cleared',
  }),
  devnet: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe: 'run: start a local devnet in-process and use its feed and RPC',
  }),
  network: setting({
    // The presets' names, from the one table (src/config/networks.ts).
    schema: enumOf(networkNames).optional(),
    expects: networkNames.join('|'),
    describe:
      "run, ingest, serve: a chain's public endpoints and source: Base (200 ms blocks from its public RPC, polled), a chain that streams flashblocks, or OP's subblocks chains (their public RPC; --ws a provider's subblocks feed) (see README)",
  }),
  execute: setting({
    schema: bool,
    boolean: true,
    default: 'true',
    expects: 'true|false',
    describe:
      'run: execute pre-confirmed transactions with the local EDR executor (receipts, logs, state diff); --no-execute publishes blocks without them',
  }),
} satisfies Record<string, SettingSpec>;
