import { createBlock, createBlockHeader } from '@ethereumjs/block';
import { Common, Mainnet } from '@ethereumjs/common';
import { createAddressFromString } from '@ethereumjs/util';
import { EVM, NobleBN254 } from '@ethereumjs/evm';
import { createVM } from '@ethereumjs/vm';
import { bytesToHex, fromRlp, hexToBytes, sha256, type Hex } from 'viem';
import { FlashlogError } from '../../errors.ts';
import { blockExtraData, nextBaseFee } from '../../op/base-fee.ts';
import { blockDaFootprint } from '../../op/da-footprint.ts';
import { executionCrypto } from './crypto.ts';
import { useFastInterpreter } from './fast-interpreter.ts';
import { installJumpAnalysisCache } from './jump-analysis-cache.ts';
import { opPrecompiles } from './precompiles.ts';
import { refuseB20 } from './b20.ts';
import { depositCoinbase, hideDepositCoinbase } from './deposit-coinbase.ts';
import { afterDenimBlock, beforeDenimBlock } from './denim.ts';
import { encodeHeader, headerHash, type BlockHeader } from '../../op/header.ts';
import { l1BlockAddress, slotKey, txFees, type TxFees } from '../../op/l1-cost.ts';
import { messagePasserAddress } from '../../op/predeploys.ts';
import { postExecReceipt, runDeposit, runUserTx, type TxReceipt } from './transactions.ts';
import { checkPostExecInBlock, refundOf } from '../../op/post-exec.ts';
import { refuseUnknownTxTypes } from '../../op/tx-types.ts';
import { encodeReceipt, orBlooms, orderedTrieRoot, type Receipt } from './receipts.ts';
import { rulesAt, type BlockRules, type RollupConfig } from '../../op/rollup-config.ts';
import { createWitnessState, emptyTrieRoot, WitnessIncompleteError, type Witness } from './witness-state.ts';
import type { MerkleStateManager } from '@ethereumjs/statemanager';

/** What the sequencer built the block from (engine API payload attributes, OP Stack fields). */
export interface PayloadAttributes {
  readonly timestamp: bigint;
  readonly prevRandao: Hex;
  readonly feeRecipient: Hex;
  readonly gasLimit: bigint;
  readonly parentBeaconBlockRoot?: Hex | undefined;
  /** Holocene: denominator ‖ elasticity, 8 bytes. */
  readonly eip1559Params?: Hex | undefined;
  /** Jovian: the minimum base fee (wei), the last 8 bytes of the block's version-1 extraData. */
  readonly minBaseFee?: bigint | undefined;
  /** Signed EIP-2718 transactions, deposits first. */
  readonly transactions: readonly Hex[];
}

export interface BlockToExecute {
  readonly config: RollupConfig;
  readonly parent: BlockHeader;
  readonly attributes: PayloadAttributes;
  /** Trie nodes, contract code and ancestor headers, by keccak256. */
  readonly witness: Witness;
}

export interface ExecutedBlock {
  readonly header: BlockHeader;
  readonly hash: Hex;
  readonly receipts: readonly Receipt[];
  /**
   * The L2ToL1MessagePasser's storage root after the block (the output root's second input). Before
   * Isthmus the witness carries its account path only if the block touched it or the prover added it.
   */
  messagePasserStorageRoot(): Promise<Hex>;
  readonly rules: BlockRules;
}

const messagePasser = messagePasserAddress;
const beaconRoots = '0x000F3df6D732807Ef1319fB7B8bB8522d0Beac02' as const;
const historyStorage = '0x0000F90827F1C53a10cb7A02335B175320002935' as const;
const emptyRequestsHash = sha256('0x');
const emptyOmmersHash: Hex = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
/** Hashes of ancestors for BLOCKHASH: the parent's, then older ones from header preimages. */
function ancestorHashes(parent: BlockHeader, witness: Witness) {
  const parentHash = headerHash(parent);
  const known = new Map<bigint, Hex>([
    [parent.number, parentHash],
    [parent.number - 1n, parent.parentHash],
  ]);
  let oldest = parent.number - 1n;
  return async (number: bigint): Promise<Hex> => {
    while (!known.has(number) && oldest > number) {
      const hash = known.get(oldest)!;
      const rlp = witness.get(hash);
      if (!rlp) throw new WitnessIncompleteError(hash, `header of block ${oldest} (BLOCKHASH ${number})`);
      const fields = fromRlp(rlp, 'hex') as Hex[];
      oldest -= 1n;
      known.set(oldest, fields[0]!);
    }
    const hash = known.get(number);
    if (!hash) throw new FlashlogError('BLOCKHASH_RANGE', `BLOCKHASH ${number}: not an ancestor`);
    return hash;
  };
}

/**
 * Executes one L2 block statelessly with OP Stack rules and builds its header.
 *
 * Before the transactions: the EIP-4788 beacon root (Ecotone) and the EIP-2935 parent hash
 * (Isthmus) are stored. Deposits (type 0x7e) credit `mint`, bump the sender's nonce and run
 * without fees; a deposit the EVM refuses keeps its mint and nonce bump and uses its gas limit.
 * Other transactions pay the L1 data fee and the operator fee up front; the base fee goes to the
 * BaseFeeVault instead of being burnt, the L1 fee to the L1FeeVault, the operator fee to the
 * OperatorFeeVault, the priority fee to the fee recipient.
 *
 * Pre-Regolith blocks are refused, by the EVM's fork (`rules.fork`): a Base config that sets only
 * a Base fork runs that fork's EVM with no OP fork active in its config (rollup-config.ts `rulesAt`),
 * so its deposit receipts carry no nonce and its deposits are not held to the block's gas limit
 * (base/base `crates/common/evm/src/executor/block_executor.rs` @05a4bfa8: `self.is_regolith ||
 * !is_deposit`; a Bedrock L1-info deposit's 150M gas then counts in gasUsed over the limit).
 *
 * `options.reference`: run on ethereumjs's own pure-JS crypto and interpreter loop instead of
 * crypto.ts and fast-interpreter.ts (the same results, slower; for comparison).
 *
 * @example const { hash } = await executeBlock({ config, parent, attributes, witness })
 */
export async function executeBlock(input: BlockToExecute, options: { reference?: boolean } = {}): Promise<ExecutedBlock> {
  const { config, parent, attributes, witness } = input;
  const number = parent.number + 1n;
  refuseUnknownTxTypes(number, attributes.transactions);
  const [crypto] = await Promise.all([executionCrypto(options.reference ? 'reference' : 'fast'), installJumpAnalysisCache()]);
  const rules = rulesAt(config, attributes.timestamp, parent.timestamp);
  if (rules.fork === 'bedrock')
    throw new FlashlogError('FORK_UNSUPPORTED', `block at ${attributes.timestamp}: pre-Regolith blocks are not executed`);
  const parentHash = headerHash(parent);
  const baseFeePerGas = nextBaseFee(parent, config, rules);
  const extraData = blockExtraData(rules, attributes.eip1559Params, attributes.minBaseFee);
  // Lagoon: the post-exec transaction's block rules, before anything runs (lagoon/post-exec.md, sdm.md).
  const postExec = checkPostExecInBlock(attributes.transactions, number, rules.active('lagoon'));
  // Jovian: blobGasUsed holds the DA footprint, checked against the gas limit before execution as op-geth's body validation does.
  const blobGasUsed = rules.active('jovian') ? blockDaFootprint(attributes.transactions, attributes.gasLimit) : 0n;
  const ecotone = rules.active('ecotone');
  if (ecotone && attributes.parentBeaconBlockRoot === undefined)
    throw new FlashlogError('ATTRIBUTES_INVALID', 'payload.parentBeaconBlockRoot: required from Ecotone on');
  const chain = { ...Mainnet, chainId: rules.chainId, name: `op-${rules.chainId}` };
  const common = new Common({ chain, hardfork: rules.evmHardfork, customCrypto: crypto.customCrypto });
  const state = createWitnessState(witness, parent.stateRoot, common, options.reference);
  const blockHash = ancestorHashes(parent, witness);
  const blockchain = {
    async getBlock(n: number) {
      const hash = await blockHash(BigInt(n));
      return { hash: () => hexToBytes(hash) };
    },
    async putBlock() {},
    shallowCopy() {
      return blockchain;
    },
  };
  // The EVM is built here, not by createVM: ethereumjs 10.1.3's createEVM replaces any `bn254`
  // option with its pure-JS NobleBN254, so the bn254 precompiles never ran on crypto.bn254.
  const evm = new EVM({
    common,
    stateManager: state,
    blockchain: blockchain as never,
    customPrecompiles: opPrecompiles(common, rules) as never,
    bn254: crypto.bn254 ?? new NobleBN254(),
  });
  const vm = await createVM({ common, stateManager: state, blockchain: blockchain as never, evm });
  refuseB20(vm.evm, rules);
  if (!options.reference) await useFastInterpreter(vm.evm);
  const headerData = (baseFee: bigint, coinbase: Hex = attributes.feeRecipient) => ({
    number,
    timestamp: attributes.timestamp,
    coinbase,
    gasLimit: attributes.gasLimit,
    baseFeePerGas: baseFee,
    mixHash: attributes.prevRandao,
    difficulty: 0n,
    parentHash,
    extraData,
    ...(ecotone ? { parentBeaconBlockRoot: attributes.parentBeaconBlockRoot, excessBlobGas: 0n, blobGasUsed: 0n } : {}),
  });
  const block = createBlock(
    { header: createBlockHeader(headerData(baseFeePerGas), { common, skipConsensusFormatValidation: true }), withdrawals: [] },
    { common, skipConsensusFormatValidation: true },
  );
  // A deposit is validated against a zero base fee (it pays no fees) but executes in the real
  // block: BASEFEE inside a deposit reads the block's base fee, as op-geth gives it. Its runTx
  // coinbase is a sentinel, so the fee recipient's account is not read for it (deposit-coinbase.ts).
  const depositBlock = createBlock(
    { header: createBlockHeader(headerData(0n, depositCoinbase), { common, skipConsensusFormatValidation: true }), withdrawals: [] },
    { common, skipConsensusFormatValidation: true },
  );
  hideDepositCoinbase(vm, state, attributes.feeRecipient);
  const runCall = vm.evm.runCall.bind(vm.evm);
  vm.evm.runCall = (opts) => runCall({ ...opts, block });

  if (ecotone)
    await storeIfDeployed(state, beaconRoots, [
      [attributes.timestamp % 8191n, slotKey(attributes.timestamp)],
      [(attributes.timestamp % 8191n) + 8191n, attributes.parentBeaconBlockRoot!],
    ]);
  if (rules.active('isthmus')) await storeIfDeployed(state, historyStorage, [[(number - 1n) % 8191n, parentHash]]);

  const millisPart = await beforeDenimBlock({
    state,
    config,
    rules,
    number,
    parentTimestamp: parent.timestamp,
    transactions: attributes.transactions,
  });

  const receipts: Receipt[] = [];
  let cumulativeGasUsed = 0n;
  let fees: TxFees | undefined;
  for (const [index, raw] of attributes.transactions.entries()) {
    const where = `transaction ${index}`;
    const bytes = hexToBytes(raw);
    let receipt: TxReceipt;
    try {
      if (bytes[0] === 0x7e) {
        receipt = await runDeposit(vm, state, common, raw, depositBlock, rules);
      } else if (bytes[0] === 0x7d) {
        receipt = postExecReceipt(); // checked above; its refunds were settled with the transactions they name
      } else {
        fees ??= await txFees(rules, async (slot) =>
          bytesToHex(await state.getStorage(createAddressFromString(l1BlockAddress), hexToBytes(slotKey(slot)))),
        );
        receipt = await runUserTx(vm, state, common, bytes, block, baseFeePerGas, fees, refundOf(postExec, index));
      }
    } catch (error) {
      if (error instanceof WitnessIncompleteError)
        throw new WitnessIncompleteError(error.key, error.context ? `${error.context}, ${where}` : where);
      if (error instanceof FlashlogError && error.code === 'FORK_UNSUPPORTED')
        throw new FlashlogError('FORK_UNSUPPORTED', `block ${number}, ${where}: ${error.message}`, { cause: error });
      throw new FlashlogError('BLOCK_INVALID', `${where}: ${(error as Error).message}`, { cause: error });
    }
    cumulativeGasUsed += receipt.gasUsed;
    receipts.push({ ...receipt, cumulativeGasUsed });
  }
  if (rules.active('regolith') && cumulativeGasUsed > attributes.gasLimit)
    throw new FlashlogError('BLOCK_INVALID', `gas used ${cumulativeGasUsed} exceeds the gas limit ${attributes.gasLimit}`);
  await afterDenimBlock(state, number, millisPart, receipts[1]?.status);

  const stateRoot = bytesToHex(await state.getStateRoot());
  const messagePasserStorageRoot = async (): Promise<Hex> => {
    const account = await state.getAccount(createAddressFromString(messagePasser));
    return account ? bytesToHex(account.storageRoot) : emptyTrieRoot;
  };
  const header: BlockHeader = {
    parentHash,
    sha3Uncles: emptyOmmersHash,
    miner: attributes.feeRecipient.toLowerCase() as Hex,
    stateRoot,
    transactionsRoot: await orderedTrieRoot(attributes.transactions, crypto.customCrypto.keccak256),
    receiptsRoot: await orderedTrieRoot(receipts.map(encodeReceipt), crypto.customCrypto.keccak256),
    logsBloom: orBlooms(receipts.map((receipt) => receipt.logsBloom)),
    difficulty: 0n,
    number,
    gasLimit: attributes.gasLimit,
    gasUsed: cumulativeGasUsed,
    timestamp: attributes.timestamp,
    extraData,
    mixHash: attributes.prevRandao,
    nonce: '0x0000000000000000',
    baseFeePerGas,
    withdrawalsRoot: rules.active('canyon') ? (rules.active('isthmus') ? await withdrawalsRootOf(state) : emptyTrieRoot) : undefined,
    blobGasUsed: ecotone ? blobGasUsed : undefined,
    excessBlobGas: ecotone ? 0n : undefined,
    parentBeaconBlockRoot: ecotone ? attributes.parentBeaconBlockRoot : undefined,
    requestsHash: rules.active('isthmus') ? emptyRequestsHash : undefined,
  };
  encodeHeader(header);
  return { header, hash: headerHash(header), receipts, messagePasserStorageRoot, rules };
}

/**
 * Isthmus's withdrawalsRoot: the message passer's storage root, as op-geth's StateDB.GetStorageRoot
 * reads it — the zero hash when the account does not exist (a chain without the predeploy).
 */
async function withdrawalsRootOf(state: MerkleStateManager): Promise<Hex> {
  const account = await state.getAccount(createAddressFromString(messagePasser));
  return account ? bytesToHex(account.storageRoot) : zeroHash;
}
const zeroHash: Hex = `0x${'00'.repeat(32)}`;

/** A system contract's storage writes (EIP-4788, EIP-2935), skipped while it has no code, as geth's system call does. */
async function storeIfDeployed(state: MerkleStateManager, address: string, writes: [bigint, Hex][]) {
  const contract = createAddressFromString(address);
  if ((await state.getCode(contract)).length === 0) return;
  for (const [slot, value] of writes)
    await state.putStorage(contract, hexToBytes(slotKey(slot)), hexToBytes(value).slice(firstNonZero(value)));
}
const firstNonZero = (value: Hex) => {
  const bytes = hexToBytes(value);
  const i = bytes.findIndex((b) => b !== 0);
  return i < 0 ? bytes.length : i;
};
