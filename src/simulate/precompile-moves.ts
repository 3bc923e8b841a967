import type { Common } from '@ethereumjs/common';
import { getActivePrecompiles, type EVM, type ExecResult, type PrecompileInput } from '@ethereumjs/evm';
import type { TypedTransaction } from '@ethereumjs/tx';
import { Account, bytesToHex, createAddressFromString, hexToBytes, type Address } from '@ethereumjs/util';
import type { Hex } from 'viem';
import { PrecompileMovedToItselfError, ServerError } from '../errors.ts';
import type { AccountOverride, StateOverrides } from '../schemas/state-overrides.ts';
import type { ForkedState } from './fork-state.ts';

/*
 * eth_simulateV1's state overrides (execution-apis `src/eth/execute.yaml`): account fields and
 * storage laid over the forked state, and precompiles moved or removed by them, as geth does it.
 */

/**
 * Precompiles as one simulated block sees them, as geth keeps them: `movePrecompileToAddress`
 * takes the precompile at an address and serves it at another (a later move to the same address
 * wins), and any other override of a precompile's address removes the precompile there. A class
 * for its private state, like the EVM it configures.
 */
export class PrecompileMoves {
  readonly #active: Map<string, unknown>;
  readonly #extra: Map<string, unknown>;
  readonly #moved = new Map<string, { from: string; fn: unknown }>();
  readonly #vacated = new Set<string>();

  constructor(common: Common, extra: ReadonlyMap<string, unknown> = new Map()) {
    this.#extra = new Map([...extra].map(([address, fn]) => [address.toLowerCase(), fn]));
    this.#active = new Map([...getActivePrecompiles(common).entries()].map(([key, fn]) => [`0x${key}`.toLowerCase(), fn]));
    for (const [address, fn] of this.#extra) if (!this.#active.has(address)) this.#active.set(address, fn);
  }

  /** The precompile served at an address now, if any. */
  at(address: string): unknown {
    return this.#moved.get(address)?.fn ?? (this.#vacated.has(address) ? undefined : this.#active.get(address));
  }

  isDestination(address: string): boolean {
    return this.#moved.has(address);
  }

  move(from: string, to: string): void {
    const fn = this.at(from);
    this.#moved.delete(from);
    this.#vacated.add(from);
    this.#moved.set(to, { from, fn });
    this.#vacated.delete(to);
  }

  vacate(address: string): void {
    this.#moved.delete(address);
    this.#vacated.add(address);
  }

  get changed(): boolean {
    return this.#moved.size > 0 || this.#vacated.size > 0;
  }

  /** Where the moved precompiles now live (warm only if the transaction names them, as in geth). */
  destinations(): string[] {
    return [...this.#moved.keys()];
  }

  /** The chain's own precompile addresses (warm for every transaction, EIP-2929, even when vacated). */
  vacated(): string[] {
    return [...this.#vacated];
  }

  /** ethereumjs `customPrecompiles`: the chain's extra precompiles, the moves, the removals. */
  custom() {
    const out: { address: Address; function?: (input: PrecompileInput) => Promise<ExecResult> | ExecResult }[] = [];
    for (const address of this.#vacated) out.push({ address: createAddressFromString(address) });
    for (const [address, fn] of this.#extra) {
      if (!this.#vacated.has(address) && !this.#moved.has(address))
        out.push({ address: createAddressFromString(address), function: fn as (input: PrecompileInput) => ExecResult });
    }
    for (const [address, { fn }] of this.#moved)
      out.push({ address: createAddressFromString(address), function: fn as (input: PrecompileInput) => ExecResult });
    return out as never;
  }
}

/**
 * EIP-2929 warm addresses as geth has them when precompiles moved: the chain's own precompile
 * addresses stay warm, the addresses precompiles moved to are warm only if the transaction names
 * them (ethereumjs warms its live precompile set instead). Runs as the transaction's first frame
 * starts, after ethereumjs has warmed its set.
 */
export function warmAsGeth(evm: EVM, moves: PrecompileMoves, tx: TypedTransaction, from: Address, coinbase: Address): void {
  if (!moves.changed || !evm.common.isActivatedEIP(2929)) return;
  const journal = evm.journal as unknown as { addAlwaysWarmAddress(address: string): void; alwaysWarmJournal: Map<string, Set<string>> };
  for (const address of moves.vacated()) journal.addAlwaysWarmAddress(address.slice(2));
  const named = new Set<string | undefined>([
    tx.to?.toString(),
    from.toString(),
    coinbase.toString(),
    ...('accessList' in tx ? (tx.accessList as [Uint8Array, Uint8Array[]][]).map(([a]) => bytesToHex(a)) : []),
  ]);
  for (const address of moves.destinations()) if (!named.has(address)) journal.alwaysWarmJournal.delete(address.slice(2));
}

/**
 * Lays state overrides over the state. The caller's overrides also act on precompiles, with
 * geth's checks (request-level -32000 errors); the pre-confirmed diff (`asUser` false) is chain
 * state and never removes a precompile.
 */
export async function applyOverrides(state: ForkedState, overrides: StateOverrides, moves: PrecompileMoves, asUser = true): Promise<void> {
  const named = new Set(Object.keys(overrides).map((key) => key.toLowerCase()));
  for (const [key, override] of Object.entries(overrides)) {
    const address = key.toLowerCase();
    if (asUser) {
      if (moves.isDestination(address)) throw new ServerError(`account ${address} has already been overridden by a precompile`);
      const isPrecompile = moves.at(address) !== undefined;
      const to = override.movePrecompileToAddress?.toLowerCase();
      if (to !== undefined) {
        if (!isPrecompile) throw new ServerError(`account ${address} is not a precompile`);
        // the specification's -38022; geth answers this case -32000 "is already overridden"
        if (to === address)
          throw new PrecompileMovedToItselfError(`account ${address} is moved to itself (movePrecompileToAddress references itself)`);
        if (named.has(to)) throw new ServerError(`account ${to} is already overridden`);
        moves.move(address, to);
      } else if (isPrecompile) {
        moves.vacate(address);
      }
    }
    await applyAccount(state, createAddressFromString(address), override);
  }
}

async function applyAccount(state: ForkedState, address: Address, override: AccountOverride): Promise<void> {
  if (override.code !== undefined) await state.putCode(address, hexToBytes(override.code as Hex));
  if (override.balance !== undefined || override.nonce !== undefined) {
    const account = (await state.getAccount(address)) ?? new Account();
    if (override.balance !== undefined) account.balance = BigInt(override.balance);
    if (override.nonce !== undefined) account.nonce = BigInt(override.nonce);
    await state.putAccount(address, account);
  }
  if (override.state) {
    if ((await state.getAccount(address)) === undefined) await state.putAccount(address, new Account());
    await state.clearStorage(address);
  }
  for (const [slot, value] of Object.entries(override.state ?? override.stateDiff ?? {})) {
    await state.putStorage(address, hexToBytes(slot as Hex), unpadded(hexToBytes(value as Hex)));
  }
}

function unpadded(bytes: Uint8Array): Uint8Array {
  let start = 0;
  while (start < bytes.length && bytes[start] === 0) start++;
  return bytes.subarray(start);
}
