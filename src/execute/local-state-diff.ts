import type { AssembledBlock } from '../chain/assemble.ts';
import type { AccountDiff, RpcReceipt } from '../records/blocks.ts';
import type { EdrCaller } from './edr.ts';

/**
 * The local executor's state diff of the block so far (`--state-diff`), accumulated in `diff`
 * (address -> account) flashblock after flashblock.
 */
interface PrestateDiff {
  pre: Record<string, { balance?: string; nonce?: number | string; code?: string; storage?: Record<string, string> }>;
  post: Record<string, { balance?: string; nonce?: number | string; code?: string; storage?: Record<string, string> }>;
}

/** OP fee vaults credited by every user transaction: base fee, L1 fee, operator fee. */
const FEE_VAULTS = [
  '0x4200000000000000000000000000000000000019',
  '0x420000000000000000000000000000000000001a',
  '0x420000000000000000000000000000000000001b',
];
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
): Promise<void> {
  const touched = new Set<string>([block.header.miner.toLowerCase(), ...FEE_VAULTS]);
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
