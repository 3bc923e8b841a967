import { keccak256, numberToHex, type Hex } from 'viem';

/**
 * A flat copy of the devnet chain's current state (every account's balance, nonce and code, and
 * every storage slot ever written to a non-zero value), kept as blocks are sealed, so that a new
 * EDR provider forked at the sealed head can read the state from it lazily while the provider
 * that mined the chain so far is dropped (see rollover.ts). It is bounded by the state's size,
 * not by the chain's history.
 *
 * What it covers, exactly: the genesis accounts (given), and after each sealed block every account
 * and slot a transaction of that block changed. Which ones changed comes from EDR's
 * `debug_traceTransaction` with the prestate tracer in diff mode (pre and post of every account
 * and slot the transaction modified); their values are then read from the engine at the sealed
 * block (eth_getBalance, eth_getTransactionCount, eth_getCode, eth_getStorageAt), so a slot set to
 * zero, an account emptied or a value written twice in one block is read as it is at the block's
 * end, whatever the tracer's conventions for deletions. State changed outside transactions is not
 * traced: the OP chain type has no block reward and no withdrawals, and the Prague system calls
 * (EIP-2935 block hashes, EIP-4788 beacon roots) reach contracts the devnet's genesis does not
 * have, so they change nothing (rollover-spike.test.ts checks a rolled-over chain against one that
 * was not, account by account and by state root).
 */
export interface MirrorAccount {
  balance: bigint;
  nonce: bigint;
  /** keccak256 of the code, a key of `codes` (null: no code). */
  codeHash: Hex | null;
  /** Slot -> non-zero value, 32-byte hex both. */
  readonly storage: Map<Hex, Hex>;
}

/** What the prestate tracer in diff mode answers for one transaction. */
export interface PrestateDiff {
  readonly pre: Readonly<Record<string, { readonly storage?: Readonly<Record<string, string>> }>>;
  readonly post: Readonly<Record<string, { readonly code?: string; readonly storage?: Readonly<Record<string, string>> }>>;
}

/** Accounts and slots a block changed, to be read at its end. */
export interface MirrorTouched {
  readonly accounts: Set<Hex>;
  /** Accounts whose code the block may have set. */
  readonly code: Set<Hex>;
  /** `address|slot`. */
  readonly slots: Set<string>;
}

export const emptyMirrorTouched = (): MirrorTouched => ({ accounts: new Set(), code: new Set(), slots: new Set() });

const ZERO_WORD = `0x${'0'.repeat(64)}` as Hex;
const word = (value: string): Hex => numberToHex(BigInt(value), { size: 32 });

/** Adds what one transaction's diff names to `into`. */
export function addTouched(into: MirrorTouched, diff: PrestateDiff): void {
  for (const side of [diff.pre, diff.post]) {
    for (const [address, account] of Object.entries(side)) {
      const key = address.toLowerCase() as Hex;
      into.accounts.add(key);
      for (const slot of Object.keys(account.storage ?? {})) into.slots.add(`${key}|${word(slot)}`);
    }
  }
  for (const [address, account] of Object.entries(diff.post)) if (account.code !== undefined) into.code.add(address.toLowerCase() as Hex);
}

export interface StateReader {
  balance(address: Hex): bigint;
  nonce(address: Hex): bigint;
  code(address: Hex): Hex;
  storage(address: Hex, slot: Hex): Hex;
}

type Call = <R = unknown>(method: string, params?: readonly unknown[]) => Promise<R>;

export interface StateMirror {
  /** Reads every touched account and slot from `call` at `block` and keeps them. */
  update(call: Call, block: bigint, touched: MirrorTouched): Promise<void>;
  /**
   * Reads as of sealed block `block`, from the newest update back to the oldest block kept (see
   * `prune`): a provider forked at a block reads it lazily, however long after, and so does a
   * local executor's fork of the devnet at an older parent.
   */
  at(block: bigint): StateReader;
  /** The oldest block `at` answers for. */
  oldest(): bigint;
  /** Forgets what `at` needs for blocks before `oldest`. */
  prune(oldest: bigint): void;
  /** Sets an account whole (genesis). */
  setAccount(address: Hex, account: { balance: bigint; nonce: bigint; code: Hex; storage?: ReadonlyMap<Hex, Hex> }): void;
  /** Reads as of the newest update. */
  readonly current: StateReader;
  /** Every account with its code and storage, as EDR takes genesis accounts. */
  accounts(): { address: Hex; balance: bigint; nonce: bigint; code: Hex; storage: [Hex, Hex][] }[];
  /** Every address held (tests compare them against an engine). */
  addresses(): Hex[];
  slotsOf(address: Hex): Hex[];
  /** Counts, for the log line and the metric. */
  size(): { accounts: number; slots: number; codes: number };
}

export function createStateMirror(): StateMirror {
  const accounts = new Map<Hex, MirrorAccount>();
  // Code by hash: the load deploys the same contracts again and again.
  const codes = new Map<Hex, Hex>();
  let slotCount = 0;
  // Every change of the blocks kept, oldest first: the value a key had before `block` changed it
  // (an account's key is its address, a slot's `address|slot`). A reader at block t takes the
  // value before the first change after t, or the current one.
  type Before = { readonly block: bigint; readonly value: AccountFields | Hex };
  type AccountFields = { readonly balance: bigint; readonly nonce: bigint; readonly codeHash: Hex | null };
  const changes = new Map<string, Before[]>();
  // Keys changed by each block kept, to prune them.
  const changedIn = new Map<bigint, string[]>();
  let oldestKept = 0n;
  let newest = 0n;
  const remember = (block: bigint, key: string, value: AccountFields | Hex): void => {
    let list = changes.get(key);
    if (!list) changes.set(key, (list = []));
    list.push({ block, value });
    let keys = changedIn.get(block);
    if (!keys) changedIn.set(block, (keys = []));
    keys.push(key);
  };
  const before = (key: string, at: bigint): AccountFields | Hex | undefined => changes.get(key)?.find((change) => change.block > at)?.value;

  const accountOf = (address: Hex): MirrorAccount => {
    const key = address.toLowerCase() as Hex;
    let account = accounts.get(key);
    if (!account) {
      account = { balance: 0n, nonce: 0n, codeHash: null, storage: new Map() };
      accounts.set(key, account);
    }
    return account;
  };
  const setCode = (account: MirrorAccount, code: Hex): void => {
    if (code === '0x') {
      account.codeHash = null;
      return;
    }
    const hash = keccak256(code);
    codes.set(hash, code);
    account.codeHash = hash;
  };
  const setSlot = (account: MirrorAccount, slot: Hex, value: Hex): void => {
    const had = account.storage.has(slot);
    if (BigInt(value) === 0n) {
      if (had) slotCount--;
      account.storage.delete(slot);
    } else {
      if (!had) slotCount++;
      account.storage.set(slot, word(value));
    }
  };

  const codeOf = (hash: Hex | null): Hex => (hash ? codes.get(hash)! : '0x');
  const current: StateReader = {
    balance: (address) => accounts.get(address.toLowerCase() as Hex)?.balance ?? 0n,
    nonce: (address) => accounts.get(address.toLowerCase() as Hex)?.nonce ?? 0n,
    code: (address) => codeOf(accounts.get(address.toLowerCase() as Hex)?.codeHash ?? null),
    storage: (address, slot) => accounts.get(address.toLowerCase() as Hex)?.storage.get(word(slot)) ?? ZERO_WORD,
  };

  return {
    async update(call, block, touched) {
      const tag = numberToHex(block);
      newest = block;
      for (const address of touched.accounts) {
        const account = accountOf(address);
        remember(block, address, { balance: account.balance, nonce: account.nonce, codeHash: account.codeHash });
        account.balance = BigInt(await call<Hex>('eth_getBalance', [address, tag]));
        account.nonce = BigInt(await call<Hex>('eth_getTransactionCount', [address, tag]));
        if (touched.code.has(address)) setCode(account, await call<Hex>('eth_getCode', [address, tag]));
      }
      for (const entry of touched.slots) {
        const [address, slot] = entry.split('|') as [Hex, Hex];
        remember(block, entry, current.storage(address, slot));
        setSlot(accountOf(address), slot, await call<Hex>('eth_getStorageAt', [address, slot, tag]));
      }
    },
    setAccount(address, given) {
      const account = accountOf(address);
      account.balance = given.balance;
      account.nonce = given.nonce;
      setCode(account, given.code);
      for (const [slot, value] of given.storage ?? []) setSlot(account, word(slot), value);
    },
    current,
    at(block) {
      if (block < oldestKept || block > newest)
        throw new RangeError(`state at block ${block} is not kept (blocks ${oldestKept} to ${newest} are)`);
      const accountAt = (address: Hex) => before(address.toLowerCase(), block) as AccountFields | undefined;
      return {
        balance: (address) => accountAt(address)?.balance ?? current.balance(address),
        nonce: (address) => accountAt(address)?.nonce ?? current.nonce(address),
        code(address) {
          const fields = accountAt(address);
          return fields ? codeOf(fields.codeHash) : current.code(address);
        },
        storage: (address, slot) =>
          (before(`${address.toLowerCase()}|${word(slot)}`, block) as Hex | undefined) ?? current.storage(address, slot),
      };
    },
    oldest: () => oldestKept,
    prune(oldest) {
      for (let block = oldestKept; block <= oldest && block <= newest; block++) {
        for (const key of changedIn.get(block) ?? []) {
          const list = changes.get(key);
          if (!list) continue;
          // A change at `block` is what a reader at block - 1 needs: gone with it.
          while (list.length > 0 && list[0]!.block <= oldest) list.shift();
          if (list.length === 0) changes.delete(key);
        }
        changedIn.delete(block);
      }
      if (oldest > oldestKept) oldestKept = oldest;
    },
    accounts: () =>
      [...accounts].map(([address, account]) => ({
        address,
        balance: account.balance,
        nonce: account.nonce,
        code: codeOf(account.codeHash),
        storage: [...account.storage],
      })),
    addresses: () => [...accounts.keys()],
    slotsOf: (address) => [...(accounts.get(address.toLowerCase() as Hex)?.storage.keys() ?? [])],
    size: () => ({ accounts: accounts.size, slots: slotCount, codes: codes.size }),
  };
}
