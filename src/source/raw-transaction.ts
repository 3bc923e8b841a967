import { keccak256, type Hex } from 'viem';
import { chainConfig, serializeTransaction } from 'viem/op-stack';

const formatters = chainConfig.formatters;

/**
 * The EIP-2718 bytes of a transaction a node returned as JSON (a full block's `transactions`),
 * with viem's OP Stack formatter and serializer (deposits included). The records keep raw bytes
 * (flashlog.blocks `transactions[].raw`), and nodes do not send them with a block. Null when the
 * bytes do not hash to the node's `hash` (a field viem does not know): the caller then asks the
 * node for them (eth_getRawTransactionByHash).
 */
export function rawTransaction(rpcTx: Record<string, unknown>): Hex | null {
  // Lagoon's post-exec transaction: 0x7d ‖ its `input` (rlp(payload)); viem does not know the type.
  if (String(rpcTx.type).toLowerCase() === '0x7d' && typeof rpcTx.input === 'string') {
    const raw = `0x7d${rpcTx.input.slice(2)}` as Hex;
    return keccak256(raw) === String(rpcTx.hash).toLowerCase() ? raw : null;
  }
  try {
    const tx = formatters.transaction.format(rpcTx as never) as unknown as Record<string, unknown>;
    const signature =
      tx.type === 'deposit'
        ? undefined
        : {
            r: tx.r as Hex,
            s: tx.s as Hex,
            ...(tx.type === 'legacy' ? { v: tx.v as bigint } : { yParity: tx.yParity as number }),
          };
    const raw = serializeTransaction({ ...tx, data: tx.input } as never, signature as never) as Hex;
    return keccak256(raw) === String(rpcTx.hash).toLowerCase() ? raw : null;
  } catch {
    return null;
  }
}
