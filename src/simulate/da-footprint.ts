import type { TypedTransaction } from '@ethereumjs/tx';
import { bytesToHex, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import { daFootprintOf } from '../op/da-footprint.ts';
import { txBytes } from './simulated-block.ts';

/**
 * A simulated Jovian block's `blobGasUsed` as op-geth answers it: the DA footprint
 * (src/op/da-footprint.ts) of its calls' transactions, as their hashes cover them, with the
 * scalar of the base block's L1-info deposit, which op-geth puts before every simulated block's
 * calls (internal/ethapi/simulate.go processBlock, then core/types/rollup_cost.go
 * CalcDAFootprint). Where op-geth fails the whole simulation instead (a base block without that
 * deposit, the genesis; a Jovian activation block's Isthmus-form deposit before user calls),
 * flashlog answers, with a footprint of 0: the calls' results do not depend on it.
 *
 * @example header.blobGasUsed = simulatedDaFootprint(base.l1InfoTx, executed.map((e) => e.tx))
 */
export function simulatedDaFootprint(l1InfoTx: Hex | undefined, txs: readonly TypedTransaction[]): bigint {
  if (!l1InfoTx?.toLowerCase().startsWith('0x7e')) return 0n;
  try {
    return daFootprintOf([l1InfoTx, ...txs.map((tx) => bytesToHex(txBytes(tx)))]);
  } catch (error) {
    if (error instanceof FlashlogError && error.code === 'BLOCK_INVALID' && /activation block/.test(error.message)) return 0n;
    throw error;
  }
}
