import { bytesToHex, hexToBytes, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { errorMessage } from '../../errors.ts';
import { EnclaveRefusal } from './refusal.ts';
import { preimageStore, type PreimageStore } from './preimage-store.ts';
import { rangeExecution } from './range-execution.ts';
import type { ReexecPool } from './reexec-pool.ts';
import { deriveAndExecute } from './derive-range.ts';
import { knownRollupConfigs } from '../../op/chains.ts';
import { parseRollupConfig, type RollupConfig } from '../../op/rollup-config.ts';
import { configHashOfChain, configHashOfRollup } from '../config-hash.ts';
import { bootKeys, isthmusTime, type EnclaveCheck } from '../boot-info.ts';
import { decodeHeader, type DecodedHeader } from '../header-preimage.ts';
import { intermediateRootsOf, journalDigest } from '../journal.ts';
import { accountStorageRoot } from './mpt.ts';
import { messagePasserAddress, outputRootV0 } from '../output-root.ts';
import type { EnclaveRequest, EnclaveResponse, Preimage, ProofResult, Proposal } from '../enclave-protocol.ts';
import { signDigest } from '../signature.ts';
import { l2TimestampOfBlock, scheduleIdOf, zeroScheduleId } from '../schedule-id.ts';

export const zeroHash: Hex = `0x${'00'.repeat(32)}`;

export interface BootInfo {
  readonly l1Head: Hex;
  readonly agreedOutputRoot: Hex;
  readonly claimedOutputRoot: Hex;
  readonly claimedBlockNumber: number;
  readonly chainId: number;
  readonly proposer: Address;
  readonly intermediateBlockInterval: number;
  readonly l1HeadNumber: number;
  /** Boot key 11: the L2 block whose timestamp pins the scheduleId (the claimed block when absent or 0). */
  readonly scheduleBlockNumber: number;
}

export { EnclaveRefusal };

export interface EnclaveCore {
  readonly signerAddress: Address;
  /** 65-byte SEC1 uncompressed key, 0x04‖x‖y. */
  readonly publicKey: Uint8Array;
  readonly teeImageHash: Hex;
  handle(request: EnclaveRequest): Promise<EnclaveResponse>;
}

export { preimageStore, type PreimageStore };

export function loadBootInfo(store: PreimageStore): BootInfo {
  const fixed = (id: number, name: string, length: number, optional = false): Uint8Array | undefined => {
    const value = store.local(id);
    if (value === undefined) {
      if (optional) return undefined;
      throw new EnclaveRefusal(`boot info: local key ${id} (${name}) is missing`);
    }
    if (value.length !== length)
      throw new EnclaveRefusal(`boot info: local key ${id} (${name}) has ${value.length} bytes, expected ${length}`);
    return value;
  };
  const u64 = (id: number, name: string, optional = false) => {
    const value = fixed(id, name, 8, optional);
    if (!value) return 0;
    const n = new DataView(value.buffer, value.byteOffset, 8).getBigUint64(0, false);
    if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new EnclaveRefusal(`boot info: ${name} ${n} is too large`);
    return Number(n);
  };
  const proposer = fixed(bootKeys.proposer, 'proposer', 20, true);
  const claimedBlockNumber = u64(bootKeys.claimedBlockNumber, 'claimed block number');
  // base/base `BootInfo::load`: missing or zero defaults to the claimed block; an earlier block is refused.
  const scheduleBlockNumber = u64(bootKeys.scheduleBlockNumber, 'schedule block number', true) || claimedBlockNumber;
  if (scheduleBlockNumber < claimedBlockNumber)
    throw new EnclaveRefusal(
      `boot info: local key ${bootKeys.scheduleBlockNumber} (schedule block number) ${scheduleBlockNumber} is before the claimed block ${claimedBlockNumber}`,
    );
  return {
    l1Head: bytesToHex(fixed(bootKeys.l1Head, 'l1 head', 32)!),
    agreedOutputRoot: bytesToHex(fixed(bootKeys.agreedOutputRoot, 'agreed output root', 32)!),
    claimedOutputRoot: bytesToHex(fixed(bootKeys.claimedOutputRoot, 'claimed output root', 32)!),
    claimedBlockNumber,
    chainId: u64(bootKeys.chainId, 'chain id'),
    proposer: (proposer ? bytesToHex(proposer) : `0x${'00'.repeat(20)}`) as Address,
    intermediateBlockInterval: u64(bootKeys.intermediateBlockInterval, 'intermediate block interval', true),
    l1HeadNumber: u64(bootKeys.l1HeadNumber, 'l1 head number', true),
    scheduleBlockNumber,
  };
}

interface BlockRoot {
  readonly number: number;
  readonly outputRoot: Hex;
}

/**
 * Local mode's check in place of derivation and execution: the L2 headers from the agreed head to
 * the claimed block, linked by hash, each with its output root recomputed from hash-verified data.
 * Returns the output root of every block after the agreed one.
 */
export async function verifyOutputRoots(
  boot: BootInfo,
  store: PreimageStore,
  check: EnclaveCheck = 'reexecute',
  /** Threads to re-execute the range's blocks on at once (reexec-pool.ts); without, one after the other here. */
  pool?: ReexecPool,
): Promise<BlockRoot[]> {
  const config = check === 'headers' ? undefined : rollupConfigOf(boot, store);
  const agreed = store.keccak(boot.agreedOutputRoot);
  if (!agreed || agreed.length !== 128)
    throw new EnclaveRefusal(`agreed output root ${boot.agreedOutputRoot}: its 128-byte preimage is missing`);
  if (agreed.slice(0, 32).some((byte) => byte !== 0)) throw new EnclaveRefusal('agreed output root: unsupported output root version');
  const agreedHash = bytesToHex(agreed.slice(96, 128));
  const headerOf = (hash: Hex, what: string): DecodedHeader => {
    const rlp = store.keccak(hash);
    if (!rlp) throw new EnclaveRefusal(`${what}: header ${hash} is missing from the preimages`);
    return decodeHeader(rlp, what);
  };
  const agreedHeader = headerOf(agreedHash, 'agreed L2 head');
  if (bytesToHex(agreed.slice(32, 64)) !== agreedHeader.stateRoot)
    throw new EnclaveRefusal('agreed output root: state root differs from the agreed header');
  if (boot.claimedBlockNumber <= agreedHeader.number) {
    throw new EnclaveRefusal(`claimed block ${boot.claimedBlockNumber} is not after the agreed block ${agreedHeader.number}`);
  }
  // Children by parent hash, among the hash-verified header preimages.
  const children = new Map<Hex, DecodedHeader[]>();
  for (const value of store.keccakValues()) {
    let header: DecodedHeader;
    try {
      header = decodeHeader(value);
    } catch {
      continue;
    }
    const list = children.get(header.parentHash) ?? [];
    list.push(header);
    children.set(header.parentHash, list);
  }
  const childOf = (parentHash: Hex, number: number): DecodedHeader => {
    const candidates = (children.get(parentHash) ?? []).filter((header) => header.number === number);
    if (candidates.length !== 1) {
      throw new EnclaveRefusal(
        `L2 block ${number}: ${candidates.length === 0 ? 'no header' : `${candidates.length} headers`} with parent ${parentHash} in the preimages`,
      );
    }
    return candidates[0]!;
  };
  const roots: BlockRoot[] =
    check === 'derive'
      ? await deriveAndExecute({
          rollup: config!,
          store,
          l1Head: boot.l1Head,
          agreedHash,
          claimedBlockNumber: boot.claimedBlockNumber,
          pool,
          childOf: (parentHash, number) => {
            const header = childOf(parentHash, number);
            return { hash: header.hash, rlp: bytesToHex(store.keccak(header.hash)!) };
          },
        })
      : config
        ? await reexecuteHeaders(boot, store, agreedHeader, childOf, config, pool)
        : followHeaders(boot, store, agreedHeader, childOf);
  const last = roots[roots.length - 1]!;
  if (last.outputRoot !== boot.claimedOutputRoot) {
    throw new EnclaveRefusal(
      `output root mismatch at L2 block ${last.number}: computed ${last.outputRoot}, claimed ${boot.claimedOutputRoot}`,
    );
  }
  return roots;
}

/** The `reexecute` check: the supplied headers, each re-executed from its own fields (on the pool's threads at once when given). */
async function reexecuteHeaders(
  boot: BootInfo,
  store: PreimageStore,
  agreedHeader: DecodedHeader,
  childOf: (parentHash: Hex, number: number) => DecodedHeader,
  config: RollupConfig,
  pool: ReexecPool | undefined,
): Promise<BlockRoot[]> {
  const execution = rangeExecution(config, store.witness(), pool);
  try {
    // A refusal met while following the headers stands only if no block before it failed to re-execute.
    let refusal: unknown;
    try {
      let parent = agreedHeader;
      for (let number = agreedHeader.number + 1; number <= boot.claimedBlockNumber; number++) {
        const header = childOf(parent.hash, number);
        await execution.submit({ number, parentRlp: bytesToHex(store.keccak(parent.hash)!), rlp: bytesToHex(store.keccak(header.hash)!) });
        parent = header;
      }
    } catch (error) {
      refusal = error;
    }
    const blocks = await execution.finish();
    if (refusal !== undefined) throw refusal;
    return blocks.map((block) => ({
      number: block.number,
      outputRoot: outputRootV0(block.stateRoot, block.messagePasserStorageRoot, block.hash),
    }));
  } finally {
    execution.end();
  }
}

/** The `headers` check: the supplied headers only followed, each output root from hash-verified data. */
function followHeaders(
  boot: BootInfo,
  store: PreimageStore,
  agreedHeader: DecodedHeader,
  childOf: (parentHash: Hex, number: number) => DecodedHeader,
): BlockRoot[] {
  const isthmus = isthmusTime.get(boot.chainId);
  const roots: BlockRoot[] = [];
  let parent = agreedHeader;
  for (let number = agreedHeader.number + 1; number <= boot.claimedBlockNumber; number++) {
    const header = childOf(parent.hash, number);
    let storageRoot: Hex | undefined;
    if (isthmus !== undefined && header.timestamp >= isthmus) {
      storageRoot = header.withdrawalsRoot;
      if (!storageRoot || storageRoot.length !== 66) throw new EnclaveRefusal(`L2 block ${number}: Isthmus header without withdrawalsRoot`);
    } else {
      storageRoot = accountStorageRoot(header.stateRoot, messagePasserAddress, (hash) => store.keccak(hash));
      if (!storageRoot) throw new EnclaveRefusal(`L2 block ${number}: message-passer account proof is missing from the preimages`);
    }
    roots.push({ number, outputRoot: outputRootV0(header.stateRoot, storageRoot, header.hash) });
    parent = header;
  }
  return roots;
}

/**
 * The scheduleId the proof binds to (./schedule-id.ts): the chain's upgrade schedule pinned at the
 * schedule block's L2 timestamp, from the rollup config's genesis as AggregateVerifier computes it;
 * for a chain whose config has no genesis (the devnet) or a synthetic chain numbered before it, the
 * claimed block's own header timestamp, which only a schedule block equal to the claimed block allows.
 */
function scheduleIdOfProof(boot: BootInfo, store: PreimageStore): Hex {
  // A chain flashlog knows only by its config hash (Base's Alpha, the spec-era Zeronet) has no fork
  // times here: the empty registry's seed, 0x00…00 (what such a chain's verifier pins is UNCONFIRMED).
  if (!knownRollupConfigs.has(boot.chainId) && !store.local(bootKeys.rollupConfig)) return zeroScheduleId;
  const config = rollupConfigOf(boot, store);
  let fallback: bigint | undefined;
  if (l2TimestampOfBlock(config, boot.scheduleBlockNumber) === undefined && boot.scheduleBlockNumber === boot.claimedBlockNumber) {
    const times = new Set<number>();
    for (const value of store.keccakValues()) {
      try {
        const header = decodeHeader(value);
        if (header.number === boot.claimedBlockNumber) times.add(header.timestamp);
      } catch {
        continue;
      }
    }
    if (times.size === 1) fallback = BigInt([...times][0]!);
  }
  try {
    return scheduleIdOf(config, boot.scheduleBlockNumber, fallback);
  } catch (error) {
    throw new EnclaveRefusal(`scheduleId: ${errorMessage(error)}`);
  }
}

/** The chain's rules: built in for a chain flashlog knows, else the request's boot key 6. */
function rollupConfigOf(boot: BootInfo, store: PreimageStore): RollupConfig {
  const known = knownRollupConfigs.get(boot.chainId);
  if (known) return known;
  const raw = store.local(bootKeys.rollupConfig);
  if (!raw) throw new EnclaveRefusal(`UnsupportedChain: no rollup config for L2 chain id ${boot.chainId} (boot local key 6 is missing)`);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(raw));
  } catch {
    throw new EnclaveRefusal('boot info: local key 6 (rollup config) is not JSON');
  }
  try {
    const config = parseRollupConfig(json, 'boot info: local key 6 (rollup config)');
    if (config.l2_chain_id !== boot.chainId)
      throw new EnclaveRefusal(`boot info: rollup config is for chain ${config.l2_chain_id}, the request for ${boot.chainId}`);
    return config;
  } catch (error) {
    throw error instanceof EnclaveRefusal ? error : new EnclaveRefusal(errorMessage(error));
  }
}

/**
 * The local-mode enclave: a signer key held in memory (from a CSPRNG unless one is given),
 * teeImageHash = 0 because there is no security module to measure the image.
 */
export function createEnclaveCore(options: {
  privateKey: Hex;
  check?: EnclaveCheck;
  /** Re-execution threads shared by every proof (reexec-pool.ts); without, a proof's blocks run one after the other in this thread. */
  pool?: ReexecPool;
}): EnclaveCore {
  const account = privateKeyToAccount(options.privateKey);
  const teeImageHash = zeroHash;

  async function prove(preimages: readonly Preimage[]): Promise<ProofResult> {
    const store = preimageStore(preimages);
    const boot = loadBootInfo(store);
    const configHash =
      configHashOfChain(boot.chainId) ?? (store.local(bootKeys.rollupConfig) ? configHashOfRollup(rollupConfigOf(boot, store)) : undefined);
    if (!configHash) throw new EnclaveRefusal(`UnsupportedChain: no config hash for L2 chain id ${boot.chainId}`);
    const roots = await verifyOutputRoots(boot, store, options.check ?? 'reexecute', options.pool);
    const scheduleId = scheduleIdOfProof(boot, store);
    const proposals: Proposal[] = [];
    let prev = boot.agreedOutputRoot;
    for (const root of roots) {
      const journal = {
        proposer: boot.proposer,
        l1OriginHash: boot.l1Head,
        prevOutputRoot: prev,
        startingL2Block: root.number - 1,
        outputRoot: root.outputRoot,
        endingL2Block: root.number,
        intermediateRoots: [],
        configHash,
        teeImageHash,
        scheduleId,
      };
      proposals.push({
        outputRoot: root.outputRoot,
        signature: await signDigest(journalDigest(journal), options.privateKey),
        l1OriginHash: boot.l1Head,
        l1OriginNumber: boot.l1HeadNumber,
        l2BlockNumber: root.number,
        prevOutputRoot: prev,
        configHash,
        scheduleId,
      });
      prev = root.outputRoot;
    }
    if (proposals.length === 0) throw new EnclaveRefusal('EmptyProposals');
    const teeSigner = account.address;
    if (proposals.length === 1) return { type: 'tee', aggregateProposal: proposals[0]!, proposals, teeSigner };
    const interval = boot.intermediateBlockInterval;
    if (interval === 0) throw new EnclaveRefusal('InvalidInterval: intermediate block interval is 0');
    const intermediateRoots = intermediateRootsOf(proposals, interval);
    const first = proposals[0]!;
    const last = proposals[proposals.length - 1]!;
    const aggregateJournal = {
      proposer: boot.proposer,
      l1OriginHash: boot.l1Head,
      prevOutputRoot: boot.agreedOutputRoot,
      startingL2Block: first.l2BlockNumber - 1,
      outputRoot: last.outputRoot,
      endingL2Block: last.l2BlockNumber,
      intermediateRoots,
      configHash,
      teeImageHash,
      scheduleId,
    };
    const aggregateProposal: Proposal = {
      outputRoot: last.outputRoot,
      signature: await signDigest(journalDigest(aggregateJournal), options.privateKey),
      l1OriginHash: boot.l1Head,
      l1OriginNumber: boot.l1HeadNumber,
      l2BlockNumber: last.l2BlockNumber,
      prevOutputRoot: boot.agreedOutputRoot,
      configHash,
      scheduleId,
    };
    return { type: 'tee', aggregateProposal, proposals, teeSigner };
  }

  return {
    signerAddress: account.address,
    publicKey: hexToBytes(account.publicKey),
    teeImageHash,
    async handle(request) {
      try {
        switch (request.type) {
          case 'signerPublicKey':
            return { type: 'signerPublicKey', publicKey: hexToBytes(account.publicKey) };
          case 'signerAttestation':
            return { type: 'error', message: 'attestation unavailable: no Nitro security module (local mode)' };
          case 'prove':
            return { type: 'prove', result: await prove(request.preimages) };
        }
      } catch (error) {
        return { type: 'error', message: errorMessage(error) };
      }
    },
  };
}
