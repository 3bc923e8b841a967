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
export interface Touched {
  readonly accounts: Set<Hex>;
  /** Accounts whose code the block may have set. */
  readonly code: Set<Hex>;
  /** `address|slot`. */
  readonly slots: Set<string>;
}

export const emptyTouched = (): Touched => ({ accounts: new Set(), code: new Set(), slots: new Set() });

const ZERO_WORD = `0x${'0'.repeat(64)}` as Hex;
const word = (value: string): Hex => numberToHex(BigInt(value), { size: 32 });

/** Adds what one transaction's diff names to `into`. */
export function addTouched(into: Touched, diff: PrestateDiff): void {
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
  update(call: Call, block: bigint, touched: Touched): Promise<void>;
  /**
   * From now on, keeps the value each account and slot had before its first change: a provider
   * forked here reads them as of this block (`atFork`), however long after.
   */
  markFork(): void;
  /** Reads as of the last `markFork`. */
  readonly atFork: StateReader;
  /** Sets an account whole (genesis). */
  setAccount(address: Hex, account: { balance: bigint; nonce: bigint; code: Hex; storage?: ReadonlyMap<Hex, Hex> }): void;
  /** Reads as of the newest update. */
  readonly current: StateReader;
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
  // The values before their first change since markFork (a slot's key: `address|slot`).
  let accountsAtFork = new Map<Hex, { balance: bigint; nonce: bigint; codeHash: Hex | null }>();
  let slotsAtFork = new Map<string, Hex>();

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
      for (const address of touched.accounts) {
        const account = accountOf(address);
        if (!accountsAtFork.has(address))
          accountsAtFork.set(address, { balance: account.balance, nonce: account.nonce, codeHash: account.codeHash });
        account.balance = BigInt(await call<Hex>('eth_getBalance', [address, tag]));
        account.nonce = BigInt(await call<Hex>('eth_getTransactionCount', [address, tag]));
        if (touched.code.has(address)) setCode(account, await call<Hex>('eth_getCode', [address, tag]));
      }
      for (const entry of touched.slots) {
        const [address, slot] = entry.split('|') as [Hex, Hex];
        if (!slotsAtFork.has(entry)) slotsAtFork.set(entry, current.storage(address, slot));
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
    markFork() {
      accountsAtFork = new Map();
      slotsAtFork = new Map();
    },
    current,
    atFork: {
      balance: (address) => accountsAtFork.get(address.toLowerCase() as Hex)?.balance ?? current.balance(address),
      nonce: (address) => accountsAtFork.get(address.toLowerCase() as Hex)?.nonce ?? current.nonce(address),
      code(address) {
        const before = accountsAtFork.get(address.toLowerCase() as Hex);
        return before ? codeOf(before.codeHash) : current.code(address);
      },
      storage: (address, slot) => slotsAtFork.get(`${address.toLowerCase()}|${word(slot)}`) ?? current.storage(address, slot),
    },
    addresses: () => [...accounts.keys()],
    slotsOf: (address) => [...(accounts.get(address.toLowerCase() as Hex)?.storage.keys() ?? [])],
    size: () => ({ accounts: accounts.size, slots: slotCount, codes: codes.size }),
  };
}
