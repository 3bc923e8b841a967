/**
 * Holds the layering of STYLE.md (`npm run lint`): src/ is libraries only and never imports
 * streams/; the pure folders do no I/O; folders depend one way (no folder loops); the devnet (devnet/) is a
 * tool reached only from the composition root.
 */
const notTests = '\\.test\\.ts$';
/** The pure domain: codecs, schemas, the log's records, sequencing, the view reducer. */
const pure = '^src/(chain|view|wire|schemas|records)/';
/** I/O a pure folder never imports (node: built-ins, sockets, the broker client, the EVM). */
const io = '^(node:)?(http|https|net|fs|fs/promises|worker_threads)$|node_modules/(ws|kafkajs|@nomicfoundation/edr)/';

module.exports = {
  forbidden: [
    {
      name: 'src-never-imports-streams',
      severity: 'error',
      comment: 'src/ is the pure domain; streams/ is the composition root that wires it.',
      from: { path: '^src/' },
      to: { path: '^streams/' },
    },
    {
      name: 'product-never-imports-tests',
      severity: 'error',
      from: { path: '^(src|streams|devnet)/', pathNot: notTests },
      to: { path: '^test/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'pure-folders-do-no-io',
      severity: 'error',
      comment: 'chain/, view/, wire/, schemas/ and records/ are pure: no node:http|net|fs|worker_threads, ws, kafkajs or EDR.',
      from: { path: pure, pathNot: notTests },
      to: { path: io },
    },
    // The devnets (devnet/, beside src/ and streams/) are tools, not the library: a room per devnet,
    // edr/ (flashlog's own EDR chain) and op-geth/ (op-geth behind a sequencer flashlog drives),
    // and the floor both share, devnet/*.ts (the handle, the batcher and its blob server, the load,
    // the L1-info deposit) with contracts/. They may import src/; only streams/, bench/, scripts/
    // and tests reach them.
    {
      name: 'devnet-only-from-the-composition-root',
      severity: 'error',
      comment: 'The devnet is a tool, not the library: src/ never imports devnet/ (streams/, bench/, scripts/ and tests do).',
      from: { path: '^src/', pathNot: notTests },
      to: { path: '^devnet/' },
    },
    {
      name: 'devnet-imports-the-library-not-the-wiring',
      severity: 'error',
      comment: 'devnet/ imports src/ (the library), never streams/, bench/, scripts/, or test/ outside its tests.',
      from: { path: '^devnet/', pathNot: notTests },
      to: { path: '^(streams|bench|scripts|test)/' },
    },
    {
      name: 'devnet-edr-imports-no-op-geth',
      severity: 'error',
      comment: 'The EDR devnet knows nothing of the op-geth devnet.',
      from: { path: '^devnet/edr/' },
      to: { path: '^devnet/op-geth/' },
    },
    {
      name: 'devnet-op-geth-reads-of-the-edr-devnet-only-its-accounts',
      severity: 'error',
      comment:
        'The op-geth devnet builds on the floor (devnet/*.ts, devnet/contracts/); of the EDR devnet it reads only the accounts, their balance and the mnemonic (devnet/edr/devnet.ts).',
      from: { path: '^devnet/op-geth/' },
      to: { path: '^devnet/edr/', pathNot: '^devnet/edr/devnet[.]ts$' },
    },
    {
      name: 'devnet-floor-imports-no-room',
      severity: 'error',
      comment:
        "devnet/*.ts is what both devnets share; it imports no room's code (only types: the handle and the load name the EDR producer's blocks and engine).",
      from: { path: '^devnet/[^/]+$', pathNot: notTests },
      to: { path: '^devnet/(edr|op-geth)/', dependencyTypesNot: ['type-only'] },
    },
    // No folder loops: the folders below depend one way. Lowest first:
    //   op  <  schemas, wire, jsonrpc  <  evm  <  records  <  log  <  chain, view  <  execute, simulate, source  <  rpc, prover  <  devnet/, streams/
    // (records/ is the log's contract: every topic's schema, value type, fast check and encoder, and
    // the catalogue the JSON Schemas come from. log/ and the domains above read it; it reads none of them.)
    // The OP Stack protocol (src/op/: rollup configs and the chains' fork ladders, the header, the
    // deposit transaction, the L1-info deposit's calldata, BaseTime, the base fee, the L1 cost, the
    // DA footprint, the receipts' fee fields, the known transaction types and Lagoon's post-exec
    // codec) is the floor every folder that speaks OP stands on: derive/, evm/, source/, checker/,
    // execute/, simulate/, prover/, rpc/, view/ and the devnet. It imports nothing of src/ but the
    // error catalogue, and does no I/O.
    {
      name: 'op-is-the-protocol-floor',
      severity: 'error',
      comment:
        'src/op/ (the OP Stack protocol) imports nothing of src/ but src/errors.ts: no engine (evm/), derivation, source, checker, prover, upstream client (jsonrpc/) or server; nothing of streams/.',
      from: { path: '^src/op/', pathNot: notTests },
      to: { path: '^(src|streams)/', pathNot: '^src/op/|^src/errors[.]ts$' },
    },
    {
      name: 'op-does-no-io-and-runs-no-evm',
      severity: 'error',
      comment:
        "src/op/ computes from what it is given: no files, sockets, HTTP (an RPC call is the prover host's, src/prover/host/witness-rpc.ts), workers, child processes, broker or EVM.",
      from: { path: '^src/op/', pathNot: notTests },
      to: {
        path: '^(node:)?(http|https|http2|net|tls|dgram|dns|fs|fs/promises|worker_threads|child_process)$|node_modules/(ws|kafkajs|@nomicfoundation/edr|@ethereumjs/(vm|evm|statemanager|blockchain))/',
      },
    },
    {
      name: 'no-folder-loop:schemas-and-wire-are-the-bottom',
      severity: 'error',
      from: { path: '^src/(schemas|wire)/', pathNot: notTests },
      to: { path: '^src/(chain|view|execute|simulate|rpc|source|node|prover|evm|log|records)/' },
    },
    {
      name: 'records-import-only-the-shared-primitives',
      severity: 'error',
      comment:
        "src/records/ (the log's contract) imports nothing of src/ but the shared primitives: src/schemas/hex.ts (the hex schemas and their patterns), src/schemas/flashblock.ts (a withdrawal, as the feed and the block header carry it) and src/errors.ts (the error catalogue); nothing of streams/.",
      from: { path: '^src/records/', pathNot: notTests },
      to: { path: '^(src|streams)/', pathNot: '^src/records/|^src/schemas/(hex|flashblock)[.]ts$|^src/errors[.]ts$' },
    },
    {
      name: 'no-folder-loop:log-below-the-domains',
      severity: 'error',
      comment:
        'log/ (the Log port, its adapters, the publisher, the chain stamp) is used by source/, prover/, view/ and streams/; it imports none of the domains (records/ below it holds what it writes).',
      from: { path: '^src/log/', pathNot: notTests },
      to: { path: '^src/(chain|view|execute|simulate|rpc|source|node|prover)/' },
    },
    {
      name: 'log-chain-rules-do-no-io',
      severity: 'error',
      comment:
        "src/log/chain-log.ts holds the rules of opening a log against its node's chain (the place, the check's line, asking again, a fresh devnet log); src/log/open-chain-log.ts applies them with I/O. The rules import no I/O, no log adapter or factory and no upstream client.",
      from: { path: '^src/log/chain-log[.]ts$' },
      to: { path: `${io}|^src/log/(open|open-chain-log)[.]ts$|^src/log/(embedded|kafka)/|^src/jsonrpc/` },
    },
    {
      name: 'no-folder-loop:jsonrpc-is-the-bottom',
      severity: 'error',
      comment: 'The JSON-RPC edge (framing, body reader, the one client) depends on nothing but errors.',
      from: { path: '^src/jsonrpc/', pathNot: notTests },
      to: { path: '^src/[^/]+/', pathNot: '^src/jsonrpc/' },
    },
    {
      name: 'evm-is-below-every-engine',
      severity: 'error',
      comment:
        "src/evm/ holds the EVMs flashlog runs (engines only): the OP engine (op/: stateless execution of a block from its witness, with the protocol's rules from src/op/), the ethereumjs additions, EDR's one provider setup and the one receipt encoder. execute/, simulate/, the prover, the checker, the sources, the devnet and rpc/ use it; it imports nothing of src/ but the protocol (src/op/), the error catalogue, the shared schemas and the JSON-RPC caller's type.",
      from: { path: '^src/evm/', pathNot: notTests },
      to: { path: '^(src|streams)/', pathNot: '^src/evm/|^src/op/|^src/errors[.]ts$|^src/schemas/|^src/jsonrpc/protocol[.]ts$' },
    },
    {
      name: 'no-folder-loop:chain-and-view-below-engines',
      severity: 'error',
      from: { path: '^src/(chain|view)/', pathNot: notTests },
      to: { path: '^src/(execute|simulate|rpc|jsonrpc|source|node|prover)/' },
    },
    {
      name: 'no-folder-loop:engines-below-the-servers',
      severity: 'error',
      comment: 'execute/ and simulate/ (the engines) are used by rpc/ and streams/; they reach upstreams through jsonrpc/, never rpc/.',
      from: { path: '^src/(execute|simulate)/', pathNot: notTests },
      to: { path: '^src/(rpc|source|prover)/' },
    },
    {
      name: 'no-folder-loop:source-below-the-servers',
      severity: 'error',
      from: { path: '^src/source/', pathNot: notTests },
      to: { path: '^src/(rpc|execute|simulate|prover)/' },
    },
    {
      name: 'sources-import-no-log-or-view',
      severity: 'error',
      comment:
        'src/source/ (the Source port, its adapters, create.ts) emits events and the records they are (src/records/); streams/ publishes them. A source imports nothing of the log (port, adapters, publisher) or of the view.',
      from: { path: '^src/source/', pathNot: notTests },
      to: { path: '^src/(log|view)/' },
    },
    {
      name: 'no-folder-loop:rpc-not-into-prover',
      severity: 'error',
      from: { path: '^src/rpc/', pathNot: notTests },
      to: { path: '^src/(prover|source)/' },
    },
    {
      name: 'unit-tests-boot-no-node-broker-or-devnet',
      severity: 'error',
      comment:
        'A test beside its code (npm run test:unit) starts no EDR node, devnet, Kafka client or child process; one that does lives under test/integration/.',
      from: { path: `^(src|streams|devnet)/.+${notTests}` },
      to: {
        path: [
          '^devnet/edr/(devnet|denim-devnet|edr-chain|rollover)[.]ts$',
          '^src/execute/(edr|local)[.]ts$',
          '^src/evm/edr[.]ts$',
          '^src/log/(kafka/kafka|open)[.]ts$',
          '^(node:)?child_process$',
          'node_modules/(kafkajs|@nomicfoundation/edr)/',
          '^test/helpers/(op-upstream|edr-chain|devnet-feed|devnet-gateway|blocks-gateway|flashlog-process)[.]ts$',
        ].join('|'),
      },
    },
    // Derivation's decoding (src/derive/: frames, blobs, channels, batches) is pure: it reads
    // bytes it is given and imports no server, log, source, engine, devnet or prover, nor any I/O.
    // The chain facts it needs (rollup config, L1 info, header) come from the protocol, src/op/, so a
    // proof's walk goes prover -> derive -> op and prover -> evm -> op, never derive <-> evm.
    {
      name: 'derive-is-pure',
      severity: 'error',
      comment:
        'src/derive/ decodes what it is given: no rpc/, view/, log/, source/, evm/ (the engines), devnet/ or prover/, no files or sockets.',
      from: { path: '^src/derive/', pathNot: notTests },
      to: { path: `^src/(rpc|view|log|source|evm|prover)/|${io}` },
    },
    // The prover's rooms: host/ (prover_prove, witness collection, enclave routing), enclave/
    // (checks, re-executes, signs), bridge/ (log <-> host). What two of them share (the enclave
    // protocol and its frames, the request, the journal, output roots, signatures, config hashes,
    // the boot keys) sits on the floor, src/prover/*.ts, which imports no room. No room imports
    // another: the host reaches an enclave only through the protocol, over a socket.
    {
      name: 'prover-floor-imports-no-room',
      severity: 'error',
      comment: 'src/prover/*.ts is what host, enclave and bridge share; it imports none of them.',
      from: { path: '^src/prover/[^/]+$', pathNot: notTests },
      to: { path: '^src/prover/(host|enclave|bridge)/' },
    },
    {
      name: 'prover-enclave-imports-no-other-room',
      severity: 'error',
      comment: 'The enclave runs alone (in a TEE): it knows the protocol, never the host or the bridge.',
      from: { path: '^src/prover/enclave/', pathNot: notTests },
      to: { path: '^src/prover/(host|bridge)/' },
    },
    {
      name: 'prover-enclave-reaches-no-network-or-log',
      severity: 'error',
      comment:
        'The enclave gets everything as preimages: no HTTP/sockets, upstream client, broker or log of its own (the frame server on the floor carries its bytes).',
      from: { path: '^src/prover/enclave/', pathNot: notTests },
      to: {
        path: '^(node:)?(http|https|http2|net|tls|dgram|dns)$|node_modules/(ws|kafkajs)/|^src/(log|jsonrpc|rpc|source)/',
      },
    },
    {
      name: 'prover-host-imports-no-enclave-or-bridge',
      severity: 'error',
      comment: 'The host talks to enclaves through the protocol and its client (host/enclave-client.ts), never their code.',
      from: { path: '^src/prover/host/', pathNot: notTests },
      to: { path: '^src/prover/(enclave|bridge)/' },
    },
    {
      name: 'prover-bridge-imports-no-host-or-enclave',
      severity: 'error',
      comment: 'The bridge reaches the host over HTTP (bridge/host-client.ts), never its code.',
      from: { path: '^src/prover/bridge/', pathNot: notTests },
      to: { path: '^src/prover/(host|enclave)/' },
    },
    // The log's rooms: embedded/ (one SQLite file) and kafka/ (kafkajs, its replay worker). Each
    // adapter implements the port (src/log/port.ts) alone; src/log/open.ts, the one factory, picks
    // one. The library and streams/ reach an adapter only through that factory; tests and the bench
    // build adapters directly (they test and measure them).
    {
      name: 'log-embedded-imports-no-kafka',
      severity: 'error',
      comment: 'The embedded log knows nothing of Kafka: what both share sits on the floor, src/log/*.ts.',
      from: { path: '^src/log/embedded/' },
      to: { path: '^src/log/kafka/|node_modules/kafkajs/' },
    },
    {
      name: 'log-kafka-imports-no-embedded',
      severity: 'error',
      comment: 'The Kafka log knows nothing of the embedded one.',
      from: { path: '^src/log/kafka/' },
      to: { path: '^src/log/embedded/' },
    },
    {
      name: 'log-floor-imports-no-room',
      severity: 'error',
      comment:
        'src/log/*.ts (the port, the publisher, the topic prefix, the chain stamp) imports no adapter; only open.ts, the factory, does.',
      from: { path: '^src/log/[^/]+$', pathNot: `^src/log/open[.]ts$|${notTests}` },
      to: { path: '^src/log/(embedded|kafka)/' },
    },
    {
      name: 'log-rooms-only-through-the-factory',
      severity: 'error',
      comment: 'Outside src/log, the product opens a log with src/log/open.ts and uses it through the port (src/log/port.ts).',
      from: { path: '^(src|streams)/', pathNot: `^src/log/|${notTests}` },
      to: { path: '^src/log/(embedded|kafka)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: ['(^|/)node_modules/', '^bench/[.]cache/'] },
  },
};
