import { hexToBigInt, hexToNumber, parseAbiItem, size, slice, toEventSelector, type Hex } from 'viem';
import type { L1Log, L1Receipt } from './user-deposits.ts';

/**
 * The SystemConfig as derivation tracks it (specs/protocol/system-config.md), updated by the L1
 * SystemConfig contract's event
 *
 *   event ConfigUpdate(uint256 indexed version, UpdateType indexed updateType, bytes data)
 *
 * whose `data` (version 0) is `abi.encode(bytes)` of one payload per update type:
 *
 *   type  name                     payload                                 since
 *   0     batcher                  address (32-byte word)                  Bedrock
 *   1     fee scalars              overhead bytes32, scalar bytes32        Bedrock (Ecotone: overhead zeroed, scalar checked)
 *   2     gas limit                uint64 (32-byte word)                   Bedrock
 *   3     unsafe block signer      ignored by derivation                   Bedrock
 *   4     EIP-1559 params          bytes32, low 8 bytes denominator‖elasticity (both zero or neither)  Holocene
 *   5     operator fee params      bytes32 (scalar u32 at 20, constant u64 at 24)   Isthmus
 *   6     min base fee             uint64 (32-byte word)                   Jovian
 *   7     DA footprint gas scalar  uint16 (32-byte word)                   Jovian
 *
 * A word's unused high bytes must be zero and nothing may follow the payload. As in op-node, an
 * update that does not fit leaves the config as it was and is reported, not thrown: L1 can emit
 * anything, and the chain goes on.
 */
export interface SystemConfig {
  readonly batcher: Hex;
  /** Pre-Ecotone L1 fee overhead (zeroed by an Ecotone fee-scalars update). */
  readonly overhead: Hex;
  /** bytes32: version 0 (Bedrock scalar) or 1 (Ecotone: blobBaseFeeScalar at 24, baseFeeScalar at 28). */
  readonly scalar: Hex;
  readonly gasLimit: bigint;
  /** bytes8: denominator u32 ‖ elasticity u32 (Holocene). */
  readonly eip1559Params: Hex;
  /** bytes32: operatorFeeScalar u32 at 20, operatorFeeConstant u64 at 24 (Isthmus). */
  readonly operatorFeeParams: Hex;
  readonly minBaseFee: bigint;
  readonly daFootprintGasScalar: number;
}

export const configUpdateEvent = parseAbiItem('event ConfigUpdate(uint256 indexed version, uint8 indexed updateType, bytes data)');
export const configUpdateTopic = toEventSelector(configUpdateEvent);

export interface SystemConfigRules {
  /** The L1 SystemConfig contract. */
  readonly systemConfig: Hex;
  /** Ecotone is active at the L1 block's timestamp (op-node compares the L1 time with the L2 fork time). */
  readonly ecotone: boolean;
}

/** An update the config did not take, and why. */
export interface SkippedUpdate {
  readonly logIndex: number;
  readonly reason: string;
}

const word = (data: Hex, index: number) => slice(data, index * 32, index * 32 + 32);
const zeroHigh = (value: Hex, keepBytes: number) => hexToBigInt(slice(value, 0, 32 - keepBytes)) === 0n;

/** The payload of `abi.encode(bytes)` holding `words` 32-byte words, or why not. */
function payloadWords(data: Hex, words: number): Hex[] | string {
  const expected = 64 + 32 * words;
  if (size(data) < 32 || hexToBigInt(word(data, 0)) !== 32n) return 'invalid pointer field';
  if (size(data) < 64 || hexToBigInt(word(data, 1)) !== BigInt(32 * words)) return 'invalid length field';
  if (size(data) < expected) return 'payload is truncated';
  if (size(data) > expected) return 'too many bytes';
  return Array.from({ length: words }, (_, i) => word(data, 2 + i));
}

/** An unsigned number in the low `bytes` of a word, or why not. */
function uintWord(data: Hex, bytes: number): bigint | string {
  const words = payloadWords(data, 1);
  if (typeof words === 'string') return words;
  if (!zeroHigh(words[0]!, bytes)) return 'padding is not empty';
  return hexToBigInt(words[0]!);
}

/** op-node's `CheckEcotoneL1SystemConfigScalar`: version 0 with 27 zero bytes of padding, or version 1 with 23. */
export function ecotoneScalarError(scalar: Hex): string | undefined {
  const version = hexToNumber(slice(scalar, 0, 1));
  if (version === 0) return hexToBigInt(slice(scalar, 1, 28)) === 0n ? undefined : 'version 0 scalar padding is not empty';
  if (version === 1) return hexToBigInt(slice(scalar, 1, 24)) === 0n ? undefined : 'version 1 scalar padding is not empty';
  return `unknown scalar version ${version}`;
}

/** One update applied to `config`: the new config, or why it was not taken. */
export function applyConfigUpdateLog(config: SystemConfig, log: L1Log, rules: SystemConfigRules): SystemConfig | string {
  if (log.topics.length !== 3) return `expected 3 topics (event, version, updateType), got ${log.topics.length}`;
  if (log.topics[0]!.toLowerCase() !== configUpdateTopic) return `topic 0 ${log.topics[0]} is not ConfigUpdate`;
  const version = hexToBigInt(log.topics[1]!);
  if (version !== 0n) return `unknown ConfigUpdate version ${version}`;
  const updateType = hexToBigInt(log.topics[2]!);
  const { data } = log;
  switch (updateType) {
    case 0n: {
      const words = payloadWords(data, 1);
      if (typeof words === 'string') return `batcher: ${words}`;
      if (!zeroHigh(words[0]!, 20)) return 'batcher: address padding is not empty';
      return { ...config, batcher: slice(words[0]!, 12, 32) };
    }
    case 1n: {
      const words = payloadWords(data, 2);
      if (typeof words === 'string') return `fee scalars: ${words}`;
      const [overhead, scalar] = words as [Hex, Hex];
      if (!rules.ecotone) return { ...config, overhead, scalar };
      // Ecotone: an unknown scalar form is ignored, the old scalar kept (not an error in op-node).
      if (ecotoneScalarError(scalar)) return config;
      return { ...config, overhead: `0x${'00'.repeat(32)}`, scalar };
    }
    case 2n: {
      const gasLimit = uintWord(data, 8);
      return typeof gasLimit === 'string' ? `gas limit: ${gasLimit}` : { ...config, gasLimit };
    }
    case 3n:
      return config;
    case 4n: {
      const words = payloadWords(data, 1);
      if (typeof words === 'string') return `EIP-1559 params: ${words}`;
      const params = slice(words[0]!, 24, 32);
      const denominator = hexToNumber(slice(params, 0, 4));
      const elasticity = hexToNumber(slice(params, 4, 8));
      if ((denominator === 0) !== (elasticity === 0))
        return `EIP-1559 params: denominator ${denominator} and elasticity ${elasticity} must both be zero or both non-zero`;
      return { ...config, eip1559Params: params };
    }
    case 5n: {
      const words = payloadWords(data, 1);
      return typeof words === 'string' ? `operator fee params: ${words}` : { ...config, operatorFeeParams: words[0]! };
    }
    case 6n: {
      const minBaseFee = uintWord(data, 8);
      return typeof minBaseFee === 'string' ? `min base fee: ${minBaseFee}` : { ...config, minBaseFee };
    }
    case 7n: {
      const scalar = uintWord(data, 2);
      return typeof scalar === 'string' ? `DA footprint gas scalar: ${scalar}` : { ...config, daFootprintGasScalar: Number(scalar) };
    }
    default:
      return `unknown update type ${updateType}`;
  }
}

/**
 * The SystemConfig after an L1 block's `ConfigUpdate` logs (successful receipts, the SystemConfig
 * contract's address, in log order). A pure state transition: `config` is not changed.
 *
 * @example applySystemConfigUpdates(config, epoch.receipts, { systemConfig, ecotone: rulesAt(rollup, l1Time).active('ecotone') }).config
 */
export function applySystemConfigUpdates(
  config: SystemConfig,
  receipts: readonly L1Receipt[],
  rules: SystemConfigRules,
): { config: SystemConfig; skipped: SkippedUpdate[] } {
  const address = rules.systemConfig.toLowerCase();
  const skipped: SkippedUpdate[] = [];
  let current = config;
  for (const receipt of receipts) {
    if (receipt.status !== 'success') continue;
    for (const log of receipt.logs) {
      if (log.address.toLowerCase() !== address || log.topics[0]?.toLowerCase() !== configUpdateTopic) continue;
      const next = applyConfigUpdateLog(current, log, rules);
      if (typeof next === 'string') skipped.push({ logIndex: log.logIndex, reason: next });
      else current = next;
    }
  }
  return { config: current, skipped };
}
