import type { EVM, Message } from '@ethereumjs/evm';
import { bytesToHex, type Hex } from 'viem';
import { FlashlogError } from '../../errors.ts';
import type { BlockRules } from '../../op/rollup-config.ts';

/**
 * Base's B20 native tokens (Beryl, changed in Cobalt) are Rust precompiles in base/base
 * (`crates/common/precompiles/src/{b20_factory,b20_asset,b20_stablecoin,activation,policy}`),
 * with their own storage layout and gas schedule. flashlog does not implement them, so a block
 * that reaches one cannot be reproduced: it is refused, naming the address and the fork, rather
 * than run as a call to an empty account.
 *
 * Addresses (base/base `b20_factory/variant.rs`, base/docs B20 architecture-and-precompiles):
 * the factory 0xB20f…00, the ActivationRegistry 0x8453…0001, the PolicyRegistry 0x8453…0002,
 * and every token `0xb2 ‖ 9 zero bytes ‖ variant ‖ 9 bytes` (the structural prefix
 * `has_b20_prefix`; any variant byte, so a variant added later is refused too).
 */
export const B20_FACTORY: Hex = '0xb20f000000000000000000000000000000000000';
export const B20_ACTIVATION_REGISTRY: Hex = '0x8453000000000000000000000000000000000001';
export const B20_POLICY_REGISTRY: Hex = '0x8453000000000000000000000000000000000002';
const fixed = new Set<string>([B20_FACTORY, B20_ACTIVATION_REGISTRY, B20_POLICY_REGISTRY]);

/** Whether `address` (20 bytes) is one of the B20 precompiles' addresses. */
export function isB20Address(address: Uint8Array): boolean {
  if (address.length !== 20) return false;
  if (address[0] === 0xb2 && address.subarray(1, 10).every((byte) => byte === 0)) return true;
  return fixed.has(bytesToHex(address));
}

/**
 * From Beryl on, every message (a transaction's own call or value transfer, or a CALL,
 * STATICCALL, DELEGATECALL or CALLCODE inside it) whose target or code address is a B20
 * address stops execution with FORK_UNSUPPORTED. The error leaves the EVM (it is not a
 * revert), so the block is refused; a deposit that meets it is not taken for a failed deposit.
 */
export function refuseB20(evm: { events?: EVM['events'] }, rules: BlockRules): void {
  if (!rules.active('beryl')) return;
  const fork = rules.active('cobalt') ? 'Cobalt' : 'Beryl';
  if (!evm.events) throw new Error('the EVM has no message events to watch for B20 calls');
  evm.events.on('beforeMessage', (message: Message) => {
    for (const address of [message.to, message._codeAddress]) {
      if (address && isB20Address(address.bytes))
        throw new FlashlogError(
          'FORK_UNSUPPORTED',
          `a call to the B20 precompile ${address.toString()} (Base ${fork}): B20 precompiles are not executed, so this block cannot be reproduced`,
        );
    }
  });
}
