import { z } from 'zod';
import { url, integer, decimal, port, address, httpUrlSetting, setting, type SettingSpec } from './spec.ts';

/** Proofs: prover host, enclave, bridge, prove (issue 6). */
export const proverSettingSpecs = {
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
  l1Rpc: httpUrlSetting('prover-host: L1 execution JSON-RPC (L1 head header, signer registry)'),
  l1BeaconRpc: httpUrlSetting('prover-host: L1 beacon API, for the blobs derivation reads (--enclave-check derive)'),
  l2Rpc: httpUrlSetting('prover-host, execute-block: L2 execution JSON-RPC (headers, transactions, state proofs)'),
  l2ChainId: setting({
    schema: integer(1).optional(),
    expects: 'a chain id',
    describe:
      'prover-host: L2 chain id (default: asked from the L2 RPC); decode-batch: the chain id span batch transactions are rebuilt with',
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
  protocolVersions: setting({
    schema: address.optional(),
    expects: '0x + 40 hex digits',
    describe:
      "prover-host: the L1 ProtocolVersions contract; every proof's scheduleId is checked against its activatedScheduleId at the claim's L2 time, and a proof Base's verifier would refuse is answered as an error",
  }),
  scheduleId: setting({
    schema: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/)
      .optional(),
    expects: '0x + 64 hex digits',
    describe:
      "verify-proposal: the scheduleId the L1 game pinned (AggregateVerifier.scheduleId(), i.e. ProtocolVersions.activatedScheduleId at the claim's L2 time); unset = the one the proposals carry",
  }),
  enclaveCheck: setting({
    schema: z.enum(['derive', 'reexecute', 'headers']),
    default: 'reexecute',
    expects: 'derive|reexecute|headers',
    describe:
      "enclave, prover-host: derive = every L2 block is derived from L1 (the host collects L1 headers, transactions, receipts and blobs; the rollup config must carry op-node's derivation fields) and re-executed from the derived transactions, and the supplied block must be the derived one; reexecute = every L2 block is re-executed from the witness and its rebuilt header must hash to the block hash (the host collects state, code and transactions); headers = only the hash-linked headers and output roots are checked (for chains whose blocks are not executable, e.g. synthetic test chains)",
  }),
  enclaveWorkers: setting({
    schema: integer(1, 256).optional(),
    expects: 'an integer 1-256',
    describe:
      "enclave: threads a proof's blocks are re-executed on at once (--enclave-check reexecute and derive); 1 = one after the other in the enclave's own thread; default: the machine's available parallelism minus one, at least 1",
  }),
  rollupConfig: setting({
    schema: z.string().min(1).optional(),
    expects: 'a path to a rollup config JSON (op-node/kona form)',
    describe:
      'prover-host, execute-block: the L2 rollup config to re-execute with (the prover host sends it as boot local key 6); default: the built-in one of OP Mainnet, OP Sepolia, Unichain, Unichain Sepolia, Base, Base Sepolia and the devnet, by chain id; decode-batch: where span batches take the chain id, genesis time and block time',
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
} satisfies Record<string, SettingSpec>;
