import type { AssembledBlock } from '../chain/assemble.ts';
import type { AccountDiff, RpcReceipt } from '../records/blocks.ts';
import type { Logger } from '../obs/logger.ts';
import { errorMessage } from '../errors.ts';
import type { EdrCaller } from '../evm/edr.ts';
import { feeVaults } from '../op/predeploys.ts';

/**
 * The local executor's state diff of the block so far (`--state-diff`), accumulated in `diff`
 * (address -> account) flashblock after flashblock.
 */
interface PrestateDiff {
  pre: Record<string, { balance?: string; nonce?: number | string; code?: string; storage?: Record<string, string> }>;
  post: Record<string, { balance?: string; nonce?: number | string; code?: string; storage?: Record<string, string> }>;
}

/** OP fee vaults credited by every user transaction: base fee, L1 fee, operator fee. */
const FEE_VAULTS: string[] = [feeVaults.baseFee, feeVaults.l1Fee, feeVaults.operatorFee];
const hexNumber = (value: bigint | number) => `0x${value.toString(16)}`;

/**
 * `accounts`: balance, nonce and code of every account the new transactions touched visibly
 * (sender, recipient, created contract, log emitters, fee recipient and OP fee vaults), read from
 * the mined block in one batch; code once per account and block (it changes only by creation).
 */
export async function accountsStateDiff(
  caller: EdrCaller,
  block: AssembledBlock,
  diff: Map<string, AccountDiff>,
  receipts: readonly RpcReceipt[],
  also: Iterable<string> = [],
): Promise<void> {
  const touched = new Set<string>([block.header.miner.toLowerCase(), ...FEE_VAULTS, ...also]);
  for (const receipt of receipts) {
    touched.add(receipt.from.toLowerCase());
    if (receipt.to) touched.add(receipt.to.toLowerCase());
    if (receipt.contractAddress) touched.add(receipt.contractAddress.toLowerCase());
    for (const log of receipt.logs) touched.add(log.address.toLowerCase());
  }
  const accounts = [...touched].map((address) => ({ address, known: diff.get(address) }));
  const calls = accounts.flatMap(({ address, known }) => [
    ['eth_getBalance', [address, 'latest']] as const,
    ['eth_getTransactionCount', [address, 'latest']] as const,
    ...(known?.code === undefined ? [['eth_getCode', [address, 'latest']] as const] : []),
  ]);
  const answers = await caller.batch<string>(calls);
  let next = 0;
  for (const { address, known } of accounts) {
    const balance = answers[next++]!;
    const nonce = answers[next++]!;
    const code = known?.code === undefined ? answers[next++]! : known.code;
    diff.set(address, { ...known, balance, nonce, code });
  }
}

/**
 * `full`: every touched account and every changed storage slot, from EDR's prestate tracer (diff
 * mode) per transaction. EDR replays the block up to each traced transaction: O(n^2) per block.
 */
export async function tracedStateDiff(caller: EdrCaller, diff: Map<string, AccountDiff>, receipts: readonly RpcReceipt[]): Promise<void> {
  for (const receipt of receipts) {
    const trace = await caller.call<PrestateDiff>('debug_traceTransaction', [
      receipt.transactionHash,
      { tracer: 'prestateTracer', tracerConfig: { diffMode: true } },
    ]);
    for (const [address, pre] of Object.entries(trace.pre)) {
      if (!(address in trace.post) && pre) diff.set(address.toLowerCase(), { balance: '0x0', nonce: '0x0', code: '0x', storage: {} });
    }
    for (const [address, post] of Object.entries(trace.post)) {
      const key = address.toLowerCase();
      const account: AccountDiff = { ...diff.get(key) };
      if (post.balance !== undefined) account.balance = post.balance;
      if (post.nonce !== undefined) account.nonce = hexNumber(BigInt(post.nonce));
      if (post.code !== undefined) account.code = post.code;
      const cleared = trace.pre[address]?.storage ?? {};
      if (post.storage || Object.keys(cleared).length) {
        const storage = { ...account.storage };
        // Slots in pre but not in post were set to zero.
        for (const slot of Object.keys(cleared)) if (!post.storage || !(slot in post.storage)) storage[slot] = `0x${'0'.repeat(64)}`;
        Object.assign(storage, post.storage ?? {});
        account.storage = storage;
      }
      diff.set(key, account);
    }
  }
}

const PRESTATE_DIFF = { tracer: 'prestateTracer', tracerConfig: { diffMode: true } } as const;

/** What a set of transactions changed: accounts, and storage slots by account (lower-case keys). */
export interface Touched {
  readonly accounts: Set<string>;
  readonly slots: Map<string, Set<string>>;
  /** Transactions the scratch chain could not trace (then traced in the mined block, see storageStateDiff). */
  readonly untraced: Set<string>;
}

export const emptyTouched = (): Touched => ({ accounts: new Set(), slots: new Map(), untraced: new Set() });

/** Adds the accounts and slots a prestate diff names (changed, or set to zero) to `into`. */
function addTouched(into: Touched, trace: PrestateDiff): void {
  for (const side of [trace.pre, trace.post]) {
    for (const [address, account] of Object.entries(side)) {
      const key = address.toLowerCase();
      into.accounts.add(key);
      if (!account?.storage) continue;
      let slots = into.slots.get(key);
      if (!slots) into.slots.set(key, (slots = new Set()));
      for (const slot of Object.keys(account.storage)) slots.add(slot.toLowerCase());
    }
  }
}

/**
 * `storage`, step 1, before the block so far is mined again: which accounts and slots each fresh
 * transaction changes. EDR's debug_traceTransaction replays a block from its start up to the traced
 * transaction, so tracing in the mined block costs O(n) per transaction (`full`). Here each fresh
 * transaction is mined alone in a scratch block on top of the block as last mined (the state it
 * runs on in the real block), with the block's environment, traced there (nothing to replay), and
 * the scratch chain is reverted. Only the keys are taken from it: the values are read from the
 * mined block (storageStateDiff). A scratch block differs from the real one only in its number
 * and the block hashes below it (timestamp, coinbase, base fee, prevRandao and gas limit are the
 * block's), so a transaction that picks the slots it writes by block.number or a recent block hash
 * is the one case whose keys could differ. A transaction the scratch chain does not trace is left
 * in `untraced`.
 */
export async function scratchTouched(
  caller: EdrCaller,
  block: AssembledBlock,
  fresh: readonly { hash: string; raw: `0x${string}` }[],
  logger: Logger,
): Promise<Touched> {
  const touched = emptyTouched();
  if (fresh.length === 0) return touched;
  const header = block.header;
  const snapshot = await caller.call<string>('evm_snapshot');
  try {
    // One crossing into EDR for the whole scratch chain: per transaction, send, set the block's
    // environment (the next-block settings hold for one block), mine.
    await caller.batch([
      ['hardhat_setCoinbase', [header.miner]],
      ['evm_setBlockGasLimit', [header.gasLimit]],
      ...fresh.flatMap(
        (tx) =>
          [
            ['eth_sendRawTransaction', [tx.raw]],
            ['hardhat_setPrevRandao', [header.prevRandao]],
            ['hardhat_setNextBlockBaseFeePerGas', [header.baseFeePerGas]],
            ['evm_setNextBlockTimestamp', [header.timestamp]],
            ['evm_mine', []],
          ] as const,
      ),
    ]);
    let traces: (PrestateDiff | null)[];
    try {
      traces = await caller.batch<PrestateDiff>(fresh.map((tx) => ['debug_traceTransaction', [tx.hash, PRESTATE_DIFF]] as const));
    } catch {
      // A batch fails whole: trace one by one to keep the ones that work.
      traces = [];
      for (const tx of fresh)
        traces.push(await caller.call<PrestateDiff>('debug_traceTransaction', [tx.hash, PRESTATE_DIFF]).catch(() => null));
    }
    traces.forEach((trace, i) => (trace ? addTouched(touched, trace) : touched.untraced.add(fresh[i]!.hash.toLowerCase())));
  } catch (error) {
    logger.debug(
      { block: Number(block.blockNumber), index: block.index, err: errorMessage(error) },
      'scratch trace failed; tracing in the block',
    );
    for (const tx of fresh) touched.untraced.add(tx.hash.toLowerCase());
  } finally {
    await caller.call('evm_revert', [snapshot]);
  }
  return touched;
}

/**
 * `storage`, step 2, on the mined block so far: `accounts` for the accounts the receipts name and
 * those the traces found (internal calls included), and the value at the block so far of every slot
 * the traces found, merged into the slots earlier flashblocks of the block changed. A transaction
 * the scratch chain did not trace is traced here, in the block (O(n), as `full`).
 */
export async function storageStateDiff(
  caller: EdrCaller,
  block: AssembledBlock,
  diff: Map<string, AccountDiff>,
  receipts: readonly RpcReceipt[],
  touched: Touched,
): Promise<void> {
  for (const receipt of receipts) {
    if (touched.untraced.has(receipt.transactionHash.toLowerCase()))
      addTouched(touched, await caller.call<PrestateDiff>('debug_traceTransaction', [receipt.transactionHash, PRESTATE_DIFF]));
  }
  await accountsStateDiff(caller, block, diff, receipts, touched.accounts);
  const cells = [...touched.slots].flatMap(([address, slots]) => [...slots].map((slot) => [address, slot] as const));
  const values = await caller.batch<string>(cells.map(([address, slot]) => ['eth_getStorageAt', [address, slot, 'latest']] as const));
  cells.forEach(([address, slot], i) => {
    const account = diff.get(address) ?? {};
    diff.set(address, { ...account, storage: { ...account.storage, [slot]: values[i]! } });
  });
}
