import { z } from 'zod';
import { address, hash32, hexBytes, quantity, type Hex } from './hex.ts';
import { parseParam } from './issue.ts';

/**
 * State overrides as eth_call, eth_estimateGas and eth_simulateV1 take them (execution-apis
 * `StateOverrides`): per address, a balance, nonce and code, and either `state` (the whole storage
 * replaced) or `stateDiff` (some slots changed), and for precompiles `movePrecompileToAddress`.
 *
 * Pending execution lays the pre-confirmed state diff under the caller's overrides, as Base's own
 * node does (`layerOverrides(pending, user)`), so both travel in this one shape.
 */
export const accountOverrideSchema = z
  .looseObject({
    balance: quantity.optional(),
    nonce: quantity.optional(),
    code: hexBytes.optional(),
    state: z.record(hash32, hash32).optional(),
    stateDiff: z.record(hash32, hash32).optional(),
    movePrecompileToAddress: address.nullable().optional(),
  })
  .refine((account) => !(account.state && account.stateDiff), { message: 'state and stateDiff are mutually exclusive' });
export type AccountOverride = z.output<typeof accountOverrideSchema>;

export const stateOverridesSchema = z.record(address, accountOverrideSchema);
export type StateOverrides = Readonly<Record<string, AccountOverride>>;

/** A caller's state overrides (absent or null: none), addresses lower-cased. */
export const callerOverridesSchema = stateOverridesSchema
  .nullish()
  .transform((overrides): StateOverrides => (overrides ? lowerAddresses(overrides) : {}));

/** Parses a caller's state overrides (absent or null: none); a bad one is -32602 naming the field. */
export function stateOverridesParam(value: unknown, where: string): StateOverrides {
  return parseParam(callerOverridesSchema, value, where);
}

/**
 * `over` on top of `under`: each field of `over` wins; its `state` replaces all storage below, its
 * `stateDiff` changes only the slots it names (on top of `under`'s `state` or `stateDiff`).
 */
export function layerOverrides(under: StateOverrides, over: StateOverrides): StateOverrides {
  const out: Record<string, AccountOverride> = { ...under };
  for (const [key, top] of Object.entries(over)) {
    const bottom = out[key];
    if (!bottom) {
      out[key] = top;
      continue;
    }
    const merged: Record<string, unknown> = { ...bottom, ...top };
    if (top.state) {
      delete merged.stateDiff;
    } else if (top.stateDiff) {
      if (bottom.state) {
        merged.state = { ...bottom.state, ...top.stateDiff };
        delete merged.stateDiff;
      } else {
        merged.stateDiff = { ...bottom.stateDiff, ...top.stateDiff };
      }
    }
    out[key] = merged as AccountOverride;
  }
  return out;
}

/** A state diff (account -> balance, nonce, code, changed storage) as overrides (`stateDiff`). */
export function diffAsOverrides(
  diff: Readonly<Record<string, { balance?: string; nonce?: string; code?: string; storage?: Record<string, string> }>>,
): StateOverrides {
  const out: Record<string, AccountOverride> = {};
  for (const [account, change] of Object.entries(diff)) {
    const override: Record<string, unknown> = {};
    if (change.balance !== undefined) override.balance = change.balance;
    if (change.nonce !== undefined) override.nonce = change.nonce;
    if (change.code !== undefined) override.code = change.code;
    if (change.storage && Object.keys(change.storage).length > 0) override.stateDiff = lowerSlots(change.storage);
    out[account.toLowerCase()] = override as AccountOverride;
  }
  return out;
}

function lowerAddresses(overrides: Record<string, AccountOverride>): StateOverrides {
  const out: Record<string, AccountOverride> = {};
  for (const [account, override] of Object.entries(overrides)) {
    const key = account.toLowerCase();
    out[key] = out[key] ? (layerOverrides({ [key]: out[key] }, { [key]: override })[key] as AccountOverride) : override;
  }
  return out;
}

function lowerSlots(storage: Record<string, string>): Record<Hex, Hex> {
  const out: Record<Hex, Hex> = {};
  for (const [slot, word] of Object.entries(storage)) out[slot.toLowerCase() as Hex] = word.toLowerCase() as Hex;
  return out;
}
