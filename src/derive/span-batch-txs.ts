import { RLP } from '@ethereumjs/rlp';
import { bigIntToUnpaddedBytes, bytesToBigInt } from '@ethereumjs/util';
import { bytesToHex, concat, hexToBytes, pad, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import { readRlpItem, rlpFields, type RlpItem } from './rlp-fields.ts';
import { encodeBitlist, encodeUvarint, type ByteReader } from './reader.ts';

/**
 * The transactions of a span batch (specs/protocol/delta/span-batches.md, "Span batch format";
 * type 4 from specs/protocol/isthmus/derivation.md), field by field:
 *
 *     txs = contract_creation_bits ++ y_parity_bits ++ tx_sigs(r 32 ++ s 32 each) ++ tx_tos(20 each, not for creations)
 *           ++ tx_datas ++ tx_nonces(uvarint each) ++ tx_gases(uvarint each) ++ protected_bits(one per legacy tx)
 *
 *     tx_data: legacy  rlp([value, gas_price, data])
 *              0x01 ++ rlp([value, gas_price, data, access_list])
 *              0x02 ++ rlp([value, max_priority_fee_per_gas, max_fee_per_gas, data, access_list])
 *              0x04 ++ rlp([value, max_priority_fee_per_gas, max_fee_per_gas, data, access_list, authorization_list])
 *              0x7d ++ rlp(payload)   Lagoon's post-exec transaction, verbatim (specs lagoon/derivation.md @538ff5ed
 *                                     § Transaction Data): contract_creation_bit 1, no tx_tos entry, y parity 0,
 *                                     r = s = 0, nonce 0, gas 0, each checked (§ Transposed Envelope Fields)
 *
 * A transaction is rebuilt as its EIP-2718 bytes with the L2 chain id: `v` is the y parity for a
 * typed transaction, `2·chainId + 35 + y` for a protected legacy one, `27 + y` otherwise.
 */
export interface SpanBatchTxs {
  readonly contractCreation: readonly boolean[];
  readonly yParity: readonly boolean[];
  readonly signatures: readonly { readonly r: Uint8Array; readonly s: Uint8Array }[];
  /** One per transaction that is not a contract creation, 20 bytes each. */
  readonly tos: readonly Hex[];
  /** Each tx_data as it is encoded (type byte, then its RLP list). */
  readonly datas: readonly Uint8Array[];
  /** The type byte of each tx_data (0 for a legacy one, which has none). */
  readonly types: readonly number[];
  readonly nonces: readonly bigint[];
  readonly gases: readonly bigint[];
  /** One per legacy transaction: protected by EIP-155. */
  readonly protectedBits: readonly boolean[];
}

/** MAX_SPAN_BATCH_ELEMENT_COUNT (specs/protocol/derivation.md, "Protocol Parameters"). */
export const maxSpanBatchElementCount = 10_000_000;

const fields = rlpFields('DERIVE_BATCH_INVALID');
const bits = (list: { has(i: number): boolean }, length: number) => Array.from({ length }, (_, i) => list.has(i));

/** Reads the `txs` section for `total` transactions. */
export function readSpanBatchTxs(reader: ByteReader, total: number, where: string): SpanBatchTxs {
  const contractCreation = bits(reader.bitlist(total, `${where} contract_creation_bits`), total);
  const yParity = bits(reader.bitlist(total, `${where} y_parity_bits`), total);
  const signatures = contractCreation.map((_, i) => ({
    r: reader.bytes(32, `${where} tx_sigs[${i}].r`),
    s: reader.bytes(32, `${where} tx_sigs[${i}].s`),
  }));
  const creations = contractCreation.filter(Boolean).length;
  const tos = Array.from({ length: total - creations }, (_, i) => bytesToHex(reader.bytes(20, `${where} tx_tos[${i}]`)));
  const datas: Uint8Array[] = [];
  const types: number[] = [];
  for (let i = 0; i < total; i++) {
    const start = reader.offset;
    const rest = reader.view();
    const typed = rest.length > 0 && rest[0]! <= 0x7f;
    const type = typed ? rest[0]! : 0;
    const body = typed ? rest.subarray(1) : rest;
    const bodyAt = start + (typed ? 1 : 0);
    if (body.length === 0) throw new FlashlogError('DERIVE_BATCH_INVALID', `${where} tx_datas[${i}] at offset ${start}: cut short`);
    const { item, size } = readRlpItem(body, 'DERIVE_BATCH_INVALID', `${where} tx_datas[${i}]`, bodyAt);
    if (item instanceof Uint8Array)
      throw new FlashlogError(
        'DERIVE_BATCH_INVALID',
        `${where} tx_datas[${i}] at offset ${bodyAt}: got a byte string, expected an RLP list`,
      );
    if (size > maxSpanBatchElementCount)
      throw new FlashlogError('DERIVE_BATCH_INVALID', `${where} tx_datas[${i}]: ${size} bytes, over the span batch size limit`);
    const taken = (typed ? 1 : 0) + size;
    datas.push(rest.subarray(0, taken));
    types.push(type);
    reader.bytes(taken, `${where} tx_datas[${i}]`);
  }
  const nonces = datas.map((_, i) => reader.uvarint(`${where} tx_nonces[${i}]`));
  const gases = datas.map((_, i) => reader.uvarint(`${where} tx_gases[${i}]`));
  const legacy = types.filter((type) => type === 0).length;
  const protectedBits = bits(reader.bitlist(legacy, `${where} protected_bits`), legacy);
  return { contractCreation, yParity, signatures, tos, datas, types, nonces, gases, protectedBits };
}

/** The encoding of the `txs` section: the inverse of `readSpanBatchTxs`. */
export function encodeSpanBatchTxs(txs: SpanBatchTxs): Uint8Array {
  return concat([
    encodeBitlist(txs.contractCreation),
    encodeBitlist(txs.yParity),
    ...txs.signatures.flatMap((sig) => [sig.r, sig.s]),
    ...txs.tos.map((to) => hexToBytes(to)),
    ...txs.datas,
    ...txs.nonces.map(encodeUvarint),
    ...txs.gases.map(encodeUvarint),
    encodeBitlist(txs.protectedBits),
  ]);
}

/** The RLP fields of a tx_data, checked as op-node's decoder checks them, by type. */
function txDataFields(data: Uint8Array, where: string): { type: number; items: RlpItem[] } {
  const legacy = data.length > 0 && data[0]! > 0x7f;
  const type = legacy ? 0 : data[0]!;
  if (!legacy && data.length <= 1) throw new FlashlogError('DERIVE_BATCH_INVALID', `${where}: typed transaction too short`);
  const counts: Record<number, number> = { 0: 3, 1: 4, 2: 5, 4: 6 };
  const count = counts[type];
  if (count === undefined || (!legacy && type === 0))
    throw new FlashlogError('DERIVE_BATCH_INVALID', `${where}: transaction type ${type} is not one a span batch carries (legacy, 1, 2, 4)`);
  const { item } = readRlpItem(legacy ? data : data.subarray(1), 'DERIVE_BATCH_INVALID', where, 0);
  const items = fields.list(item, where, count);
  const name = (field: string) => `${where} ${field}`;
  const u256 = (index: number, field: string) => fields.uint(items[index], 32, name(field));
  u256(0, 'value');
  if (type === 0 || type === 1) {
    u256(1, 'gas_price');
  } else {
    u256(1, 'max_priority_fee_per_gas');
    u256(2, 'max_fee_per_gas');
  }
  const dataIndex = type === 0 || type === 1 ? 2 : 3;
  fields.bytes(items[dataIndex], name('data'));
  if (type !== 0) checkAccessList(items[dataIndex + 1], name('access_list'));
  if (type === 4) checkAuthorizations(items[dataIndex + 2], name('authorization_list'));
  return { type, items };
}

function checkAccessList(item: RlpItem | undefined, where: string): void {
  fields.list(item, where).forEach((entry, i) => {
    const [address, keys] = fields.list(entry, `${where}[${i}]`, 2);
    fields.fixed(address, 20, `${where}[${i}].address`);
    fields.list(keys, `${where}[${i}].storageKeys`).forEach((key, j) => fields.fixed(key, 32, `${where}[${i}].storageKeys[${j}]`));
  });
}

function checkAuthorizations(item: RlpItem | undefined, where: string): void {
  fields.list(item, where).forEach((entry, i) => {
    const [chainId, address, nonce, yParity, r, s] = fields.list(entry, `${where}[${i}]`, 6);
    fields.uint(chainId, 32, `${where}[${i}].chainId`);
    fields.fixed(address, 20, `${where}[${i}].address`);
    fields.uint(nonce, 8, `${where}[${i}].nonce`);
    fields.uint(yParity, 1, `${where}[${i}].yParity`);
    fields.uint(r, 32, `${where}[${i}].r`);
    fields.uint(s, 32, `${where}[${i}].s`);
  });
}

const uintBytes = (value: bigint) => bigIntToUnpaddedBytes(value);

/**
 * The transactions as EIP-2718 bytes, rebuilt with the L2 chain id. Throws `DERIVE_BATCH_INVALID`
 * naming the transaction when a tx_data is not a transaction a span batch may carry.
 */
export function spanBatchTransactions(txs: SpanBatchTxs, chainId: bigint, where: string): Uint8Array[] {
  let toIndex = 0;
  let legacyIndex = 0;
  return txs.datas.map((data, i) => {
    const at = `${where} transaction ${i}`;
    if (data[0] === postExecType) return postExecFromSlots(txs, i, data, at);
    const { type, items } = txDataFields(data, at);
    const creation = txs.contractCreation[i]!;
    const to = creation ? new Uint8Array() : hexToBytes(txs.tos[toIndex++]!);
    const y = txs.yParity[i] ? 1n : 0n;
    const signature = txs.signatures[i]!;
    const r = uintBytes(bytesToBigInt(signature.r));
    const s = uintBytes(bytesToBigInt(signature.s));
    const nonce = uintBytes(txs.nonces[i]!);
    const gas = uintBytes(txs.gases[i]!);
    const chain = uintBytes(chainId);
    if (type === 0) {
      const v = txs.protectedBits[legacyIndex++] ? chainId * 2n + 35n + y : 27n + y;
      const [value, gasPrice, input] = items;
      return RLP.encode([nonce, gasPrice, gas, to, value, input, uintBytes(v), r, s] as Uint8Array[]);
    }
    if (type === 1) {
      const [value, gasPrice, input, accessList] = items;
      return concat([Uint8Array.of(1), RLP.encode([chain, nonce, gasPrice!, gas, to, value!, input!, accessList!, uintBytes(y), r, s])]);
    }
    if (type === 4 && creation) throw new FlashlogError('DERIVE_BATCH_INVALID', `${at}: a SetCode transaction (type 4) needs a to address`);
    const [value, tip, fee, input, accessList, ...authorizations] = items;
    const list = [chain, nonce, tip!, fee!, gas, to, value!, input!, accessList!, ...authorizations, uintBytes(y), r, s];
    return concat([Uint8Array.of(type), RLP.encode(list)]);
  });
}

const postExecType = 0x7d;

/**
 * A post-exec transaction's span batch slots must hold the fixed values lagoon/derivation.md gives
 * them (a decoder "MUST verify that each of them is zero" and that its contract-creation bit is 1);
 * the transaction is its tx_data verbatim, whose payload is not read here (§ Transaction Data: the
 * batch decoder must not inspect the version).
 */
function postExecFromSlots(txs: SpanBatchTxs, i: number, data: Uint8Array, at: string): Uint8Array {
  const nonZero = [
    ...(txs.contractCreation[i] ? [] : ['contract_creation_bits (must be 1)']),
    ...(txs.yParity[i] ? ['y_parity_bits'] : []),
    ...(txs.signatures[i]!.r.some((b) => b !== 0) ? ['tx_sigs.r'] : []),
    ...(txs.signatures[i]!.s.some((b) => b !== 0) ? ['tx_sigs.s'] : []),
    ...(txs.nonces[i] !== 0n ? ['tx_nonces'] : []),
    ...(txs.gases[i] !== 0n ? ['tx_gases'] : []),
  ];
  if (nonZero.length)
    throw new FlashlogError(
      'DERIVE_BATCH_INVALID',
      `${at}: a post-exec transaction (0x7d) with ${nonZero.join(', ')} not as lagoon/derivation.md fixes them`,
    );
  return data;
}

/**
 * The span batch fields of EIP-2718 transactions (the batcher's side, for tests and peers): the
 * inverse of `spanBatchTransactions`. Throws for a type a span batch does not carry, or a
 * protected transaction of another chain.
 */
export function spanBatchTxsOf(transactions: readonly Uint8Array[], chainId: bigint): SpanBatchTxs {
  const out = {
    contractCreation: [] as boolean[],
    yParity: [] as boolean[],
    signatures: [] as { r: Uint8Array; s: Uint8Array }[],
    tos: [] as Hex[],
    datas: [] as Uint8Array[],
    types: [] as number[],
    nonces: [] as bigint[],
    gases: [] as bigint[],
    protectedBits: [] as boolean[],
  };
  transactions.forEach((tx, i) => {
    if (tx[0] === postExecType) {
      out.contractCreation.push(true);
      out.yParity.push(false);
      out.signatures.push({ r: new Uint8Array(32), s: new Uint8Array(32) });
      out.datas.push(tx);
      out.types.push(postExecType);
      out.nonces.push(0n);
      out.gases.push(0n);
      return;
    }
    const legacy = tx.length > 0 && tx[0]! >= 0xc0;
    const type = legacy ? 0 : tx[0]!;
    if (!legacy && type !== 1 && type !== 2 && type !== 4)
      throw new FlashlogError('DERIVE_BATCH_INVALID', `transaction ${i}: type ${type} cannot go in a span batch`);
    const items = fields.list(RLP.decode(legacy ? tx : tx.subarray(1)) as RlpItem, `transaction ${i}`);
    const at = (index: number) => fields.bytes(items[index], `transaction ${i} field ${index}`);
    const pad32 = (bytes: Uint8Array) => pad(bytes, { size: 32 });
    const [vItem, rItem, sItem] = [at(items.length - 3), at(items.length - 2), at(items.length - 1)];
    const v = bytesToBigInt(vItem);
    let txChain = chainId;
    let yParity: bigint;
    if (legacy) {
      const isProtected = v !== 27n && v !== 28n;
      out.protectedBits.push(isProtected);
      if (isProtected) txChain = (v - 35n) / 2n;
      yParity = isProtected ? (v - 35n) & 1n : v - 27n;
    } else {
      txChain = bytesToBigInt(at(0));
      yParity = v;
    }
    if (txChain !== chainId) throw new FlashlogError('DERIVE_BATCH_INVALID', `transaction ${i}: chain id ${txChain}, expected ${chainId}`);
    // Field positions: legacy [nonce, gasPrice, gas, to, value, data, v, r, s]; typed [chainId, nonce, …, gas, to, value, data, accessList, (auths), v, r, s].
    const [nonceAt, gasAt] = legacy ? [0, 2] : type === 1 ? [1, 3] : [1, 4];
    const to = at(gasAt + 1);
    const rest = (legacy ? [at(gasAt + 2), at(1), at(5)] : []) as RlpItem[];
    const data = legacy
      ? RLP.encode(rest)
      : concat([
          Uint8Array.of(type),
          RLP.encode(
            type === 1
              ? [items[gasAt + 2]!, items[2]!, items[gasAt + 3]!, items[gasAt + 4]!]
              : [items[gasAt + 2]!, items[2]!, items[3]!, items[gasAt + 3]!, ...items.slice(gasAt + 4, items.length - 3)],
          ),
        ]);
    out.contractCreation.push(to.length === 0);
    if (to.length > 0) out.tos.push(bytesToHex(to));
    out.yParity.push(yParity === 1n);
    out.signatures.push({ r: pad32(rItem), s: pad32(sItem) });
    out.datas.push(data);
    out.types.push(type);
    out.nonces.push(bytesToBigInt(at(nonceAt)));
    out.gases.push(bytesToBigInt(at(gasAt)));
  });
  return out;
}
