import { z } from 'zod';
import { ConfigError } from '../errors.ts';

/**
 * Every setting of every command, in one table. Each is a flag (`--kafka-brokers`) and an
 * environment variable (`FLASHLOG_KAFKA_BROKERS`); a flag wins over the variable, the variable over
 * the default. Values arrive as strings and are validated by one zod schema built from this table.
 */
export interface SettingSpec<T extends z.ZodType = z.ZodType> {
  /** The schema that parses the raw string (or string[] when repeatable) into the value. */
  readonly schema: T;
  /** What a valid value looks like, for error messages and --help. */
  readonly expects: string;
  readonly describe: string;
  /** The default, as a user would write it (shown in --help). */
  readonly default?: string | undefined;
  /** The flag may be given many times; the variable is comma-separated. */
  readonly repeatable?: boolean;
  /** A flag without a value (`--plain`); the variable takes true/false/1/0. */
  readonly boolean?: boolean;
  /** One-letter alias. */
  readonly short?: string;
}

const url = (protocols: readonly string[]) =>
  z.string().refine((value) => {
    try {
      return protocols.includes(new URL(value).protocol);
    } catch {
      return false;
    }
  });
const integer = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(min).max(max));
const decimal = (min: number) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?$/)
    .transform(Number)
    .pipe(z.number().min(min));
const port = integer(0, 65535);
const bool = z
  .union([z.literal('true'), z.literal('false'), z.literal('1'), z.literal('0'), z.literal('')])
  .transform((value) => value === 'true' || value === '1' || value === '');
const bytes = z
  .string()
  .regex(/^\d+(k|m|g|kib|mib|gib)?$/i)
  .transform((value) => {
    const match = /^(\d+)([a-z]*)$/i.exec(value)!;
    const unit = (match[2] ?? '').toLowerCase()[0];
    const scale = unit === 'k' ? 1024 : unit === 'm' ? 1024 ** 2 : unit === 'g' ? 1024 ** 3 : 1;
    return Number(match[1]) * scale;
  });
const hostPortList = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.string().regex(/^[^\s:]+:\d{1,5}$/)).min(1));
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const enumOf = <const T extends readonly [string, ...string[]]>(values: T) => z.enum(values);

function setting<T extends z.ZodType>(spec: SettingSpec<T>): SettingSpec<T> {
  return spec;
}

/** It is an invariant that keys are camelCase and their flag is the kebab-case of the key. */
export const settings = {
  // Shared by every long-running command.
  logLevel: setting({
    schema: enumOf(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']),
    default: 'info',
    expects: 'trace|debug|info|warn|error|fatal|silent',
    describe: 'pino log level (JSON logs on stdout)',
  }),
  metricsHost: setting({
    schema: z.string().min(1),
    default: '127.0.0.1',
    expects: 'a host or IP to bind',
    describe: 'Prometheus metrics bind address',
  }),
  metricsPort: setting({
    schema: port.optional(),
    expects: 'a TCP port 0-65535 (0 = any free port)',
    describe:
      'Prometheus metrics port (GET /metrics); commands with their own HTTP port (run, serve, prover-host, devnet) serve /metrics there and open this one only when it is set',
  }),
  metrics: setting({ schema: bool, boolean: true, default: 'true', expects: 'true|false', describe: 'serve Prometheus metrics' }),

  // The log.
  log: setting({
    schema: enumOf(['embedded', 'kafka']),
    default: 'embedded',
    expects: 'embedded|kafka',
    describe: 'which log to use; kafka when --kafka-brokers is set and this is left at its default',
  }),
  dataDir: setting({
    schema: z.string().min(1),
    default: './data',
    expects: 'a directory path',
    describe: 'directory of the embedded log (flashlog.db)',
  }),
  kafkaBrokers: setting({
    schema: hostPortList.optional(),
    expects: 'host:port[,host:port...]',
    describe: 'Kafka bootstrap brokers; selects the kafka log',
  }),
  kafkaClientId: setting({ schema: z.string().min(1), default: 'flashlog', expects: 'a client id', describe: 'Kafka client id' }),
  topicPrefix: setting({
    schema: z
      .string()
      .max(200)
      .regex(/^[A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only (Kafka topic names)'),
    default: '',
    expects: 'a topic name prefix such as "unichain." (empty for none)',
    describe: 'prefix of every topic and consumer group flashlog uses, so deployments can share one Kafka cluster',
  }),
  topicPartitions: setting({
    schema: integer(1, 1024),
    default: '1',
    expects: 'an integer 1-1024',
    describe: 'partitions of topics flashlog creates',
  }),
  topicRetentionMs: setting({
    schema: z
      .string()
      .regex(/^-?\d+$/)
      .transform(Number),
    default: '604800000',
    expects: 'milliseconds, -1 for forever',
    describe: 'retention of topics flashlog creates',
  }),
  topicReplication: setting({
    schema: integer(1, 16),
    default: '1',
    expects: 'an integer 1-16',
    describe: 'replication factor of topics flashlog creates',
  }),
  group: setting({
    schema: z.string().min(1).optional(),
    expects: 'a consumer group id',
    describe: 'consumer group (defaults per command)',
  }),

  // Ingest.
  ws: setting({
    schema: z
      .array(url(['ws:', 'wss:']))
      .min(1)
      .optional(),
    repeatable: true,
    expects: 'ws:// or wss:// URL (repeatable)',
    describe: 'flashblocks WebSocket feed; many are merged and de-duplicated (serve: only says the source is flashblocks, as for ingest)',
  }),
  maxFrameBytes: setting({
    schema: bytes,
    default: '16MiB',
    expects: 'bytes, e.g. 16777216 or 16MiB',
    describe: 'cap on a frame, compressed or decompressed',
  }),
  pingIntervalMs: setting({
    schema: integer(10),
    default: '500',
    expects: 'milliseconds',
    describe: 'WebSocket ping interval; no pong before the next ping reconnects',
  }),
  reconnectMinMs: setting({
    schema: integer(1),
    default: '1000',
    expects: 'milliseconds',
    describe: 'first reconnect delay (doubles each failure)',
  }),
  reconnectMaxMs: setting({ schema: integer(1), default: '10000', expects: 'milliseconds', describe: 'longest reconnect delay' }),
  aheadBlocks: setting({
    schema: integer(0, 64),
    default: '5',
    expects: 'an integer 0-64',
    describe: 'blocks buffered ahead of their canonical parent',
  }),
  produceBufferRecords: setting({
    schema: integer(1),
    default: '100000',
    expects: 'records',
    describe: 'records held while the log is unavailable before the oldest are dropped',
  }),
  drainTimeoutMs: setting({
    schema: integer(0),
    default: '5000',
    expects: 'milliseconds',
    describe:
      'at shutdown, how long ingest waits for work in flight (an execution, records not yet appended) before abandoning it; later flashblocks are published without executing',
  }),

  // The blocks source (Base after Denim, issue 14).
  source: setting({
    schema: enumOf(['flashblocks', 'blocks']).optional(),
    expects: 'flashblocks|blocks',
    describe:
      "where pre-confirmations come from: a flashblocks feed (--ws) or a node's 200 ms blocks (--rpc, --rpc-ws); default from --network, else flashblocks with --ws, blocks without",
  }),
  rpcWs: setting({
    schema: url(['ws:', 'wss:']).optional(),
    expects: 'ws:// or wss:// URL',
    describe: "blocks source: the node's WebSocket JSON-RPC (eth_subscribe newHeads); without it, --rpc is polled every --blocks-poll-ms",
  }),
  blocksPollMs: setting({
    schema: integer(10),
    default: '200',
    expects: 'milliseconds',
    describe:
      "blocks source: how often to read the node's latest block without --rpc-ws (one block time); with it, a safety poll at 10x this",
  }),
  maxReorgBlocks: setting({
    schema: integer(1, 10000),
    default: '64',
    expects: 'blocks',
    describe: "blocks source: newest blocks held for linking; a reorg deeper than this resyncs from the node's head",
  }),
  maxBackfillBlocks: setting({
    schema: integer(1, 100000),
    default: '600',
    expects: 'blocks',
    describe: 'blocks source: most blocks walked back after a gap or a reorg before resyncing (600 = 2 minutes of 200 ms blocks)',
  }),
  lifecyclePollMs: setting({
    schema: integer(0),
    default: '1000',
    expects: 'milliseconds, 0 to disable',
    describe: 'how often to read the safe / finalized heads (node tags, or optimism_syncStatus with --consensus-rpc) for flashlog.chain',
  }),

  // Tail.
  fromBeginning: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe: 'read the topic from its first record',
  }),
  limit: setting({ schema: integer(1).optional(), expects: 'a positive integer', describe: 'stop after this many records' }),
  follow: setting({ schema: bool, boolean: true, default: 'false', expects: 'true|false', describe: 'keep waiting for new records' }),

  // Upstream RPC.
  rpc: setting({
    schema: url(['http:', 'https:']).optional(),
    expects: 'http:// or https:// URL',
    describe: 'upstream JSON-RPC (canonical state)',
  }),
  rpcTimeoutMs: setting({ schema: integer(1), default: '10000', expects: 'milliseconds', describe: 'timeout of one upstream RPC request' }),

  // Execution and reconciliation of pre-confirmed blocks (issue 3).
  executor: setting({
    schema: enumOf(['auto', 'local', 'metadata', 'node']),
    default: 'auto',
    expects: 'auto|local|metadata|node',
    describe:
      'receipts of pre-confirmed txs: local EDR over state forked from --rpc, era A/B feed metadata, or a flashblocks-aware --rpc node; auto = metadata when the feed carries receipts, else local',
  }),
  stateDiff: setting({
    schema: enumOf(['storage', 'accounts', 'full', 'none']),
    default: 'storage',
    expects: 'storage|accounts|full|none',
    describe:
      'local executor state diff: storage = balance/nonce/code and changed storage slots of touched accounts (each new tx traced alone); accounts = balance/nonce/code only (pending storage reads answer the sealed block); full = storage via the prestate tracer in the block (O(n^2) per block); none',
  }),
  canonicalPollMs: setting({
    schema: integer(0),
    default: '500',
    expects: 'milliseconds, 0 to disable',
    describe: 'ingest: how often to ask --rpc for canonical heads (sealed/reorg records, held flashblocks)',
  }),

  // Gateway: the view and the JSON-RPC server (issue 4).
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
    default: '1000',
    expects: 'milliseconds, 0 to disable',
    describe: 'how often the gateway asks the upstream for its head (clears pending blocks that became canonical)',
  }),
  devnet: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe: 'run: start a local devnet in-process and use its feed and RPC',
  }),
  network: setting({
    schema: enumOf(['base-mainnet', 'base-sepolia', 'unichain-mainnet', 'unichain-sepolia', 'xlayer']).optional(),
    expects: 'base-mainnet|base-sepolia|unichain-mainnet|unichain-sepolia|xlayer',
    describe:
      "run, ingest, serve: a chain's public endpoints and source: Base (200 ms blocks from its public RPC, polled) or a chain that still streams flashblocks (see README)",
  }),
  execute: setting({
    schema: bool,
    boolean: true,
    default: 'true',
    expects: 'true|false',
    describe:
      'run: execute pre-confirmed transactions with the local EDR executor (receipts, logs, state diff); --no-execute publishes blocks without them',
  }),

  // The local devnet (`flashlog devnet`, issue 3).
  devnetHost: setting({
    schema: z.string().min(1),
    default: '127.0.0.1',
    expects: 'a host or IP to bind',
    describe: 'devnet: bind address of its JSON-RPC and flashblocks WebSocket',
  }),
  devnetPort: setting({
    schema: port,
    default: '8545',
    expects: 'a TCP port 0-65535 (0 = any free port)',
    describe: 'devnet: JSON-RPC (HTTP) port',
  }),
  devnetWsPort: setting({
    schema: port,
    default: '7111',
    expects: 'a TCP port 0-65535 (0 = any free port)',
    describe: 'devnet: flashblocks WebSocket port',
  }),
  blockTimeMs: setting({ schema: integer(1), default: '2000', expects: 'milliseconds', describe: 'devnet: block time' }),
  flashblockMs: setting({
    schema: integer(1),
    default: '200',
    expects: 'milliseconds (at most --block-time-ms)',
    describe: 'devnet: time between flashblocks',
  }),
  metadataReceipts: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe: 'devnet: flashblock metadata carries type-tagged receipts (pre-Azul era B) instead of {block_number, access_list: null}',
  }),
  plain: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe: 'devnet: send flashblocks as text frames instead of brotli binary frames',
  }),
  load: setting({
    schema: decimal(0),
    default: '0',
    expects: 'transactions per second (0 = none)',
    describe: 'devnet: built-in load generator rate (transfers, ERC-20, deployments, reverts, logs, deposits)',
  }),
  reorgEvery: setting({
    schema: integer(0),
    default: '0',
    expects: 'blocks (0 = never)',
    describe:
      'devnet: every K-th block seals without its last pre-confirmed transaction (with --denim: the unsafe head is replaced by a block without it)',
  }),
  devnetHistoryBlocks: setting({
    schema: integer(0).pipe(
      z
        .number()
        .refine(
          (blocks) => blocks === 0 || blocks >= 256,
          'expected 0 (keep everything) or at least 256 (BLOCKHASH reads 256 blocks back)',
        ),
    ),
    default: '0',
    expects: 'blocks (0 = keep everything; else at least 256)',
    describe:
      'devnet (flashblocks) / run --devnet: bounded history: every K sealed blocks the chain moves to a new EVM forked at its head and blocks and state older than the last K blocks are dropped (null / "missing trie node", as on a pruned node); blocks after the first rollover carry an EVM-made state root (docs/memory.md)',
  }),
  denim: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe:
      'devnet / run --devnet: Base after Denim: complete blocks every --denim-block-ms, no flashblocks feed, tx[1] the BaseTime deposit, WebSocket JSON-RPC (newHeads, logs) on the RPC port',
  }),
  denimBlockMs: setting({ schema: integer(1), default: '200', expects: 'milliseconds', describe: 'devnet --denim: block time' }),
  safeLagBlocks: setting({
    schema: integer(1),
    default: '10',
    expects: 'blocks',
    describe: 'devnet --denim: how far `safe` trails the unsafe head',
  }),
  finalizedLagBlocks: setting({
    schema: integer(1),
    default: '50',
    expects: 'blocks',
    describe: 'devnet --denim: how far `finalized` trails the unsafe head',
  }),

  // Proofs: prover host, enclave, bridge, prove (issue 6).
  listen: setting({
    schema: z.string().regex(/^(tcp:\/\/[^/]+:\d{1,5}|unix:.+)$/),
    default: 'tcp://127.0.0.1:8000',
    expects: 'tcp://host:port or unix:/path',
    describe: 'enclave: where to listen for host connections',
  }),
  enclave: setting({
    schema: z
      .union([z.string(), z.array(z.string())])
      .transform((value) =>
        Array.isArray(value)
          ? value
          : value
              .split(',')
              .map((part) => part.trim())
              .filter(Boolean),
      )
      .pipe(z.array(z.string().regex(/^(tcp:\/\/[^/]+:\d{1,5}|unix:.+)$/)).min(1)),
    repeatable: true,
    default: 'tcp://127.0.0.1:8000',
    expects: 'tcp://host:port or unix:/path (repeatable)',
    describe: 'prover-host: an enclave, tried in the order given',
  }),
  l1Rpc: setting({
    schema: url(['http:', 'https:']).optional(),
    expects: 'http:// or https:// URL',
    describe: 'prover-host: L1 execution JSON-RPC (L1 head header, signer registry)',
  }),
  l1BeaconRpc: setting({
    schema: url(['http:', 'https:']).optional(),
    expects: 'http:// or https:// URL',
    describe: 'prover-host: L1 beacon API (unused in local mode)',
  }),
  l2Rpc: setting({
    schema: url(['http:', 'https:']).optional(),
    expects: 'http:// or https:// URL',
    describe: 'prover-host, execute-block: L2 execution JSON-RPC (headers, transactions, state proofs)',
  }),
  l2ChainId: setting({
    schema: integer(1).optional(),
    expects: 'a chain id',
    describe: 'prover-host: L2 chain id (default: asked from the L2 RPC)',
  }),
  timeout: setting({
    schema: decimal(0.001),
    default: '1740',
    expects: 'seconds',
    describe: 'proof request timeout (prover-host), or how long prove waits for its reply',
  }),
  registry: setting({
    schema: address.optional(),
    expects: '0x-address',
    describe: 'prover-host: signer registry (isValidSigner) on L1; needs --l1-rpc; required with more than one --enclave',
  }),
  proverUrl: setting({
    schema: url(['http:', 'https:']),
    default: 'http://127.0.0.1:7300',
    expects: 'http:// or https:// URL',
    describe: 'prover-bridge: the prover host',
  }),
  proverConcurrency: setting({
    schema: integer(1, 1024),
    default: '4',
    expects: 'an integer 1-1024',
    describe: 'prover-bridge: proof requests in flight at once',
  }),
  teeImageHash: setting({
    schema: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
    default: `0x${'00'.repeat(32)}`,
    expects: '0x + 64 hex digits',
    describe: 'verify-proposal: the TEE image hash in the journal (zero for local mode)',
  }),
  enclaveCheck: setting({
    schema: z.enum(['reexecute', 'headers']),
    default: 'reexecute',
    expects: 'reexecute|headers',
    describe:
      'enclave, prover-host: reexecute = every L2 block is re-executed from the witness and its rebuilt header must hash to the block hash (the host collects state, code and transactions); headers = only the hash-linked headers and output roots are checked (for chains whose blocks are not executable, e.g. synthetic test chains)',
  }),
  rollupConfig: setting({
    schema: z.string().min(1).optional(),
    expects: 'a path to a rollup config JSON (op-node/kona form)',
    describe:
      'prover-host, execute-block: the L2 rollup config to re-execute with, for a chain flashlog does not know by id (the prover host sends it as boot local key 6)',
  }),
  blockNumber: setting({
    schema: integer(1).optional(),
    expects: 'a block number',
    describe: 'execute-block: the block of --l2-rpc to re-execute (instead of a FIXTURE.json); proof-request: the claimed L2 block',
  }),
  agreedBlockNumber: setting({
    schema: integer(0).optional(),
    expects: 'a block number',
    describe: 'proof-request: the agreed L2 block, below --block-number (default: the block before it)',
  }),
  proveDelayMs: setting({
    schema: integer(0),
    default: '0',
    expects: 'milliseconds',
    describe: 'enclave: testing only, hold each Prove this long before answering',
  }),

  // Node operation (issue 7).
  consensusRpc: setting({
    schema: url(['http:', 'https:']).optional(),
    expects: 'http:// or https:// URL',
    describe: 'the consensus client RPC (optimism_syncStatus, port 7545): node-status, and the safe/finalized heads of ingest and run',
  }),
  maxLagMinutes: setting({ schema: decimal(0), default: '5', expects: 'minutes', describe: 'node-status: behind more than this exits 1' }),
  maxSafeLagMinutes: setting({
    schema: decimal(0),
    default: '30',
    expects: 'minutes',
    describe: 'node-status: the safe head (derived from L1) further than this behind the unsafe head exits 1 (needs --consensus-rpc)',
  }),
  expectChainId: setting({
    schema: integer(1).optional(),
    expects: 'a chain ID, e.g. 8453',
    describe: 'node-status: exit 1 when the node serves another chain',
  }),
  list: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe: 'schema: list the topics instead of printing one schema',
  }),
  json: setting({
    schema: bool,
    boolean: true,
    default: 'false',
    expects: 'true|false',
    describe: 'node-status, execute-block, check-gateway: print one JSON object for machines',
  }),
  cadenceWindowMs: setting({
    schema: integer(0, 60_000),
    default: '2000',
    expects: 'milliseconds',
    describe: 'node-status: how long to watch the head of a Denim node (200 ms blocks) before judging its cadence; 0 = lag only',
  }),
  // The gateway checker (check-gateway).
  gateway: setting({
    schema: url(['http:', 'https:']).optional(),
    expects: 'http:// or https:// URL',
    describe: "check-gateway: the flashlog gateway's JSON-RPC to hold against --node",
  }),
  node: setting({
    schema: url(['http:', 'https:']).optional(),
    expects: 'http:// or https:// URL',
    describe: "check-gateway: the node the gateway stands in for (its upstream's JSON-RPC)",
  }),
  minutes: setting({
    schema: decimal(0),
    default: '0',
    expects: 'minutes (0 = until stopped)',
    describe: 'check-gateway: how long to record pending answers before the summary (0: until SIGINT/SIGTERM, as a canary)',
  }),
  blocks: setting({
    schema: integer(1).optional(),
    expects: 'a positive integer',
    describe: 'check-gateway: stop once this many pending heights are judged',
  }),
} satisfies Record<string, SettingSpec>;

export type SettingKey = keyof typeof settings;
export type Config = { [K in SettingKey]: z.output<(typeof settings)[K]['schema']> };

export const flagOf = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
export const envOf = (key: string): string => `FLASHLOG_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;

/** The one schema: every setting, raw strings in, typed config out. */
export const configSchema = z.object(
  Object.fromEntries(Object.entries(settings).map(([key, spec]) => [key, spec.default === undefined ? spec.schema : spec.schema])) as {
    [K in SettingKey]: (typeof settings)[K]['schema'];
  },
);

/**
 * Resolves the settings a command accepts from its argv and the environment.
 * Throws ConfigError naming the setting, what it got and what it expects.
 *
 * @example parseConfig(['--ws', 'ws://127.0.0.1:7111'], {}, ['ws', 'logLevel'])
 */
export function parseConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  accepted: readonly SettingKey[],
  /** Defaults of this command that differ from the table's (e.g. prover-host's port 7300). */
  defaults: Partial<Record<SettingKey, string>> = {},
): { config: Config; positionals: string[]; help: boolean } {
  const byFlag = new Map<string, SettingKey>();
  const byShort = new Map<string, SettingKey>();
  for (const key of accepted) {
    byFlag.set(flagOf(key), key);
    const short = (settings[key] as SettingSpec).short;
    if (short) byShort.set(short, key);
  }
  const raw: Partial<Record<SettingKey, string | string[]>> = {};
  const source: Partial<Record<SettingKey, string>> = {};
  for (const key of Object.keys(settings) as SettingKey[]) {
    const spec = settings[key] as SettingSpec;
    const fromEnv = env[envOf(key)];
    if (fromEnv !== undefined && fromEnv !== '') {
      raw[key] = spec.repeatable
        ? fromEnv
            .split(',')
            .map((part) => part.trim())
            .filter(Boolean)
        : fromEnv;
      source[key] = envOf(key);
    } else if ((defaults[key] ?? spec.default) !== undefined) {
      raw[key] = defaults[key] ?? spec.default;
      source[key] = 'default';
    }
  }
  const positionals: string[] = [];
  const fromFlags = new Set<SettingKey>();
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    let name: string;
    let inline: string | undefined;
    let key: SettingKey | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
      key = byFlag.get(name);
      if (!key && name.startsWith('no-') && byFlag.has(name.slice(3))) {
        const negated = byFlag.get(name.slice(3))!;
        if ((settings[negated] as SettingSpec).boolean) {
          raw[negated] = 'false';
          source[negated] = `--${name}`;
          continue;
        }
      }
    } else {
      name = arg.slice(1);
      key = byShort.get(name);
    }
    if (!key) throw new ConfigError(`unknown option ${arg}; see --help for the options of this command`);
    const spec = settings[key] as SettingSpec;
    let value: string;
    if (spec.boolean && inline === undefined) {
      value = 'true';
    } else if (inline !== undefined) {
      value = inline;
    } else {
      const next = argv[i + 1];
      if (next === undefined) throw new ConfigError(`--${flagOf(key)} needs a value: expected ${spec.expects}`);
      value = next;
      i++;
    }
    if (spec.repeatable) {
      const previous = fromFlags.has(key) ? (raw[key] as string[]) : [];
      raw[key] = [
        ...previous,
        ...value
          .split(',')
          .map((part) => part.trim())
          .filter(Boolean),
      ];
    } else {
      raw[key] = value;
    }
    fromFlags.add(key);
    source[key] = `--${flagOf(key)}`;
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path[0] as SettingKey;
    const spec = settings[key] as SettingSpec;
    const got = raw[key];
    const where =
      source[key] === 'default' || source[key] === undefined
        ? `--${flagOf(key)} (${envOf(key)})`
        : `${source[key]}${source[key]!.startsWith('--') ? ` (or ${envOf(key)})` : ` (--${flagOf(key)})`}`;
    throw new ConfigError(`${where}: got ${JSON.stringify(got)}, expected ${spec.expects}`);
  }
  const config = parsed.data as Config;
  // The log engine follows the brokers unless chosen explicitly.
  if (config.kafkaBrokers && source.log === 'default') config.log = 'kafka';
  if (config.log === 'kafka' && !config.kafkaBrokers) {
    throw new ConfigError(`--log (${envOf('log')}): got "kafka", expected --kafka-brokers (${envOf('kafkaBrokers')}) to be set with it`);
  }
  if (config.reconnectMaxMs < config.reconnectMinMs) {
    throw new ConfigError(
      `--reconnect-max-ms (${envOf('reconnectMaxMs')}): got ${config.reconnectMaxMs}, expected at least --reconnect-min-ms (${config.reconnectMinMs})`,
    );
  }
  return { config, positionals, help };
}

/** The options part of `--help` for a command. */
export function describeSettings(accepted: readonly SettingKey[], defaults: Partial<Record<SettingKey, string>> = {}): string {
  const rows = accepted.map((key) => {
    const spec = { ...(settings[key] as SettingSpec), ...(defaults[key] !== undefined ? { default: defaults[key] } : {}) };
    const flag = `--${flagOf(key)}${spec.boolean ? '' : ` <${spec.expects.length > 24 ? 'value' : spec.expects}>`}`;
    const extra = [spec.repeatable ? 'repeatable' : '', spec.default !== undefined ? `default ${spec.default}` : '']
      .filter(Boolean)
      .join(', ');
    return `  ${flag}\n      ${spec.describe}${extra ? ` (${extra})` : ''}\n      env ${envOf(key)}; expects ${spec.expects}`;
  });
  return rows.join('\n');
}
