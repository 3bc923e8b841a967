import { parseTransaction, type Hex, type TransactionSerialized } from 'viem';
import { errorMessage } from '../errors.ts';
import { knownRollupConfigs } from '../op/chains.ts';
import { l1InfoCalldata, parseL1Info, type L1InfoForm } from '../op/l1-info.ts';
import { receiptFeesOf, type ReceiptFeesOf } from '../op/receipt-fees.ts';
import { forksAtGenesis, rulesAt, type RollupConfig, type SharedFork } from '../op/rollup-config.ts';
import { ExecutionError } from './execution-error.ts';

/**
 * Which chain rules the metadata executor fills a block's receipt fee fields with:
 * 1. the rollup config it was given;
 * 2. else the built-in config of the chain id the block's first signed transaction names
 *    (src/op/chains.ts: OP Mainnet and Sepolia, Unichain and Unichain Sepolia, Base, the devnet);
 * 3. else, as the local executor runs an unknown chain at one fixed fork (EDR's `isthmus` unless
 *    told), every fork through the one the L1-info deposit's form names: Jovian for the Jovian form,
 *    Isthmus for the Isthmus form, Holocene (so Fjord's fee) for the Ecotone form, Delta for the
 *    Bedrock form. The form is what op-geth keys the fee parameters on; only Ecotone-form blocks of
 *    an unknown chain before Fjord (none live) would be read with the wrong L1 cost function.
 */
const formFork: Record<L1InfoForm, SharedFork> = { bedrock: 'delta', ecotone: 'holocene', isthmus: 'isthmus', jovian: 'jovian' };

function chainIdOf(transactions: readonly Hex[]): number | undefined {
  for (const raw of transactions) {
    if (raw.startsWith('0x7e') || raw.startsWith('0x7d')) continue;
    try {
      const chainId = parseTransaction(raw as TransactionSerialized).chainId;
      if (chainId !== undefined) return chainId;
    } catch {
      // a type viem does not parse: the next transaction may name the chain
    }
  }
  return undefined;
}

/**
 * The fee fields of a block's receipts, from its L1-info deposit (transaction 0) and its timestamp.
 *
 * @example const feesOf = await blockReceiptFees(raws, BigInt(block.header.timestamp), undefined, 'block 7 index 0'); feesOf(hexToBytes(raws[1]))
 */
export async function blockReceiptFees(
  transactions: readonly Hex[],
  timestamp: bigint,
  config: RollupConfig | undefined,
  where: string,
): Promise<ReceiptFeesOf> {
  let data: Hex;
  try {
    data = l1InfoCalldata(transactions);
  } catch (error) {
    throw new ExecutionError(`${where}: the receipts' fee fields need the block's L1-info deposit: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  const chosen =
    config ??
    knownRollupConfigs.get(chainIdOf(transactions) ?? -1) ??
    ({
      l2_chain_id: 1,
      block_time: 1,
      ...forksAtGenesis(formFork[parseL1Info(data, `${where}: L1-info deposit`).form]),
      chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
    } satisfies RollupConfig);
  return receiptFeesOf(rulesAt(chosen, timestamp), data, `${where}: L1-info deposit`);
}
