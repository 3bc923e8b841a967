import { SimpleStateManager } from '@ethereumjs/statemanager';
import { Account, KECCAK256_NULL, bytesToHex, hexToBytes, unpadBytes, type Address } from '@ethereumjs/util';
import { keccak256, type Hex } from 'viem';

/**
 * The state a simulation starts from, read lazily: one account or one storage slot at a time, at
 * one fixed block. `undefined` for an account that holds nothing (no balance, nonce or code).
 */
export interface ForkSource {
  account(address: Hex): Promise<ForkAccount | undefined>;
  storage(address: Hex, slot: Hex): Promise<bigint>;
}

export interface ForkAccount {
  readonly balance: bigint;
  readonly nonce: bigint;
  readonly code: Hex;
}

/** Marker key in the storage layer: this account's storage was cleared, the source is not read. */
const cleared = (address: string) => `${address}_cleared`;

/**
 * An ethereumjs state manager over a {@link ForkSource}: every read that the layers written by the
 * simulation do not answer goes to the source, every write stays in memory and is dropped with the
 * simulation. Checkpoints, commits and reverts are SimpleStateManager's (a stack of maps).
 *
 * A class because ethereumjs takes a StateManager object with this interface.
 *
 * Simulation runs calls from any address, contracts included (execution-apis: "sender is EOA" is
 * not checked), while ethereumjs's runTx rejects a sender with code (EIP-3607). `maskSenderCode`
 * makes the sender look code-less to that one check: its account reads with the empty code hash
 * until the transaction's first message starts (`unmaskSender`), and writes keep the real hash.
 */
export class ForkedState extends SimpleStateManager {
  readonly source: ForkSource;
  #masked: string | undefined;

  constructor(source: ForkSource) {
    super();
    this.source = source;
  }

  maskSenderCode(address: Address): void {
    this.#masked = address.toString();
  }

  unmaskSender(): void {
    this.#masked = undefined;
  }

  override async getAccount(address: Address): Promise<Account | undefined> {
    const key = address.toString();
    const top = this.topAccountStack();
    let account: Account | undefined;
    if (top.has(key)) {
      account = top.get(key);
    } else {
      const fetched = await this.source.account(key as Hex);
      if (fetched) {
        const code = hexToBytes(fetched.code);
        account = new Account(
          fetched.nonce,
          fetched.balance,
          undefined,
          code.length === 0 ? KECCAK256_NULL : hexToBytes(keccak256(fetched.code)),
        );
        this.topCodeStack().set(key, code);
      }
      top.set(key, account);
    }
    if (account && key === this.#masked) {
      return new Account(account.nonce, account.balance, undefined, KECCAK256_NULL);
    }
    return account;
  }

  override async putAccount(address: Address, account: Account | undefined): Promise<void> {
    const key = address.toString();
    if (account && key === this.#masked) {
      const real = this.topAccountStack().get(key);
      if (real) account = new Account(account.nonce, account.balance, undefined, real.codeHash);
    }
    this.topAccountStack().set(key, account);
  }

  override async getCode(address: Address): Promise<Uint8Array> {
    const key = address.toString();
    if (!this.topCodeStack().has(key) && !this.topAccountStack().has(key)) await this.getAccount(address);
    return this.topCodeStack().get(key) ?? new Uint8Array(0);
  }

  override async getStorage(address: Address, slot: Uint8Array): Promise<Uint8Array> {
    const owner = address.toString();
    const key = `${owner}_${bytesToHex(slot)}`;
    const top = this.topStorageStack();
    const held = top.get(key);
    if (held !== undefined) return held;
    if (top.has(cleared(owner))) return new Uint8Array(0);
    const value = await this.source.storage(owner as Hex, bytesToHex(slot));
    const bytes = value === 0n ? new Uint8Array(0) : unpadBytes(hexToBytes(`0x${value.toString(16).padStart(64, '0')}`));
    top.set(key, bytes);
    return bytes;
  }

  override async clearStorage(address: Address): Promise<void> {
    await super.clearStorage(address);
    this.topStorageStack().set(cleared(address.toString()), new Uint8Array(0));
  }
}
