import { concat, encodeAbiParameters, encodeEventTopics, encodePacked, numberToHex, pad, type Hex } from 'viem';
import { configUpdateEvent } from '../../src/derive/system-config.ts';
import { transactionDepositedEvent, type L1Log } from '../../src/derive/user-deposits.ts';

/**
 * L1 logs as the OptimismPortal and the SystemConfig contract emit them, written with viem's ABI
 * encoder (never by hand), for derivation tests.
 */
export const portal: Hex = '0xbeb5fc579115071764c7423a4f12edde41f106ed';
export const systemConfigAddress: Hex = '0x229047fed2591dbec1ef1118d64f7af3db9eb290';

export interface DepositFields {
  from: Hex;
  to: Hex;
  mint: bigint;
  value: bigint;
  gas: bigint;
  isCreation: boolean;
  data: Hex;
}

/** The opaqueData of a version-0 deposit: mint, value, gas, isCreation, data, tightly packed. */
export function opaqueData(deposit: DepositFields): Hex {
  return encodePacked(
    ['uint256', 'uint256', 'uint64', 'bool', 'bytes'],
    [deposit.mint, deposit.value, deposit.gas, deposit.isCreation, deposit.data],
  );
}

/** A `TransactionDeposited` log of the portal. */
export function depositLog(deposit: DepositFields, logIndex: number, version = 0n, opaque = opaqueData(deposit)): L1Log {
  const topics = encodeEventTopics({ abi: [transactionDepositedEvent], args: { from: deposit.from, to: deposit.to, version } }) as Hex[];
  return { address: portal, topics, data: encodeAbiParameters([{ type: 'bytes' }], [opaque]), logIndex };
}

/** A `ConfigUpdate` log of the SystemConfig contract carrying `payload` (abi.encode(bytes)). */
export function configLog(updateType: number, payload: Hex, logIndex: number, version = 0n): L1Log {
  const topics = encodeEventTopics({ abi: [configUpdateEvent], args: { version, updateType } }) as Hex[];
  return { address: systemConfigAddress, topics, data: encodeAbiParameters([{ type: 'bytes' }], [payload]), logIndex };
}

/** The payloads of each update type, as the SystemConfig contract encodes them. */
export const configPayload = {
  batcher: (address: Hex) => encodeAbiParameters([{ type: 'address' }], [address]),
  feeScalars: (overhead: Hex, scalar: Hex) => encodeAbiParameters([{ type: 'bytes32' }, { type: 'bytes32' }], [overhead, scalar]),
  gasLimit: (gasLimit: bigint) => encodeAbiParameters([{ type: 'uint64' }], [gasLimit]),
  unsafeBlockSigner: (address: Hex) => encodeAbiParameters([{ type: 'address' }], [address]),
  eip1559: (denominator: number, elasticity: number) =>
    encodeAbiParameters([{ type: 'uint256' }], [(BigInt(denominator) << 32n) | BigInt(elasticity)]),
  operatorFee: (scalar: number, constant: bigint) => encodeAbiParameters([{ type: 'uint256' }], [(BigInt(scalar) << 64n) | constant]),
  minBaseFee: (minBaseFee: bigint) => encodeAbiParameters([{ type: 'uint64' }], [minBaseFee]),
  daFootprintGasScalar: (scalar: number) => encodeAbiParameters([{ type: 'uint16' }], [scalar]),
};

/** An Ecotone (version 1) fee scalar: blobBaseFeeScalar at bytes 24..28, baseFeeScalar at 28..32. */
export function ecotoneScalar(baseFeeScalar: number, blobBaseFeeScalar: number, version = 1): Hex {
  return concat([
    numberToHex(version, { size: 1 }),
    pad('0x', { size: 23 }),
    numberToHex(blobBaseFeeScalar, { size: 4 }),
    numberToHex(baseFeeScalar, { size: 4 }),
  ]);
}
