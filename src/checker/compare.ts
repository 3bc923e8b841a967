/**
 * Field-by-field comparison of one gateway answer with the node's answer for the same block: the
 * pure core of `flashlog check-gateway`. Every leaf of the two JSON values is one field; a field
 * is named by the method and its path with array positions folded (`eth_getBlockByNumber[full]
 * .transactions[].s`), so mismatches count by field, not by transaction.
 *
 * Hex strings compare case-insensitively (a checksummed and a lower-case address are one value)
 * but digit for digit otherwise: `0x0ae3` is not `0xae3` (a quantity with a leading zero is not
 * valid JSON-RPC, and a strict client refuses it).
 */

/** How the gateway's block related to the node's when it answered. */
export interface BlockShape {
  /**
   * A block being built (a flashblocks source): the gateway named no hash for it (null or zero).
   * Fields that only sealing fixes may then be placeholders.
   */
  readonly building: boolean;
  /** Transactions of the gateway's block when it answered. */
  readonly transactions: number;
  /** Transactions of the node's sealed block. */
  readonly sealedTransactions: number;
}

export const isPartial = (shape: BlockShape): boolean => shape.transactions < shape.sealedTransactions;

/**
 * Header fields that depend on the whole transaction list (or on the state after it), so a
 * partial block cannot know them: compared only once the gateway's block had every transaction
 * of the node's. `withdrawalsRoot` is the L2ToL1MessagePasser's storage root on OP chains since
 * Isthmus, so it moves with the transactions too.
 */
export const SEALING_FIELDS: ReadonlySet<string> = new Set([
  'hash',
  'stateRoot',
  'receiptsRoot',
  'transactionsRoot',
  'logsBloom',
  'gasUsed',
  'size',
  'blobGasUsed',
  'withdrawalsRoot',
]);

export interface Mismatch {
  readonly field: string;
  readonly gateway: unknown;
  readonly node: unknown;
}

export interface NotCompared {
  readonly field: string;
  readonly reason: string;
}

/** What one comparison found. */
export interface Comparison {
  /** Leaves compared (equal or not). */
  compared: number;
  readonly mismatches: Mismatch[];
  /** Fields left out, once per field name. */
  readonly notCompared: NotCompared[];
}

export const emptyComparison = (): Comparison => ({ compared: 0, mismatches: [], notCompared: [] });

export function mergeComparison(into: Comparison, from: Comparison): Comparison {
  into.compared += from.compared;
  into.mismatches.push(...from.mismatches);
  for (const entry of from.notCompared) if (!into.notCompared.some((seen) => seen.field === entry.field)) into.notCompared.push(entry);
  return into;
}

/** An answer as the wire gave it: a result or a JSON-RPC error. */
export type Answer = { readonly result: unknown } | { readonly error: { readonly code: number; readonly message: string } };

/**
 * A field only the gateway's answer has is listed, not counted: the node is what the gateway is
 * held against, and a node may leave out a field the specification has (EDR has no `yParity`).
 */
export const ONLY_GATEWAY = "only the gateway's answer has this field: the node has nothing to hold it against";

const isHex = (value: unknown): value is string => typeof value === 'string' && /^0x[0-9a-fA-F]*$/.test(value);
const isPlaceholder = (value: unknown): boolean => value === null || value === undefined || (isHex(value) && /^0x0*$/.test(value));

/** Two leaves are equal: hex case-insensitively, anything else exactly. */
export function leafEqual(gateway: unknown, node: unknown): boolean {
  if (isHex(gateway) && isHex(node)) return gateway.toLowerCase() === node.toLowerCase();
  return gateway === node;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What a block being built may leave open, by the last key of a path: its own hash in every
 * object that names it (and the block timestamp its transactions give only with that hash), and
 * the sealing fields of its header.
 */
function openBeforeSealing(field: string, key: string, path: string, shape: BlockShape | undefined, gateway: unknown): string | undefined {
  if (!shape?.building) return undefined;
  if (key === 'blockHash' && isPlaceholder(gateway))
    return 'the hash of a block being built is not known before sealing (gateway: null or zero)';
  // go-ethereum gives `blockTimestamp` only with a block hash; a transaction of a block being built has neither.
  if (key === 'blockTimestamp' && gateway === undefined && (field.startsWith('eth_getTransactionBy') || path === `transactions[].${key}`))
    return 'a transaction of a block being built has no block timestamp yet, as a go-ethereum transaction without a block hash';
  if (field.startsWith('eth_getBlockBy') && path === key && SEALING_FIELDS.has(key)) {
    if (isPartial(shape)) return 'a partial block (the first transactions of the sealed block) cannot know what sealing fixes';
    if (isPlaceholder(gateway)) return 'a block being built cannot know what sealing fixes (gateway: a placeholder)';
  }
  return undefined;
}

/**
 * Compares `gateway` with `node` leaf by leaf under `field` (the method's name), appending to
 * `out`. Arrays compare position by position and by length; objects by the node's keys (a key
 * the gateway lacks is a mismatch with `undefined`; a key only the gateway has is listed as not
 * compared).
 *
 * @example compareValues('eth_getTransactionByHash', gatewayTx, nodeTx, undefined, comparison)
 */
export function compareValues(field: string, gateway: unknown, node: unknown, shape: BlockShape | undefined, out: Comparison): Comparison {
  walk(field, '', gateway, node, shape, out);
  return out;
}

const joinPath = (field: string, path: string): string => (!path ? field : path.startsWith('[') ? `${field}${path}` : `${field}.${path}`);

function walk(field: string, path: string, gateway: unknown, node: unknown, shape: BlockShape | undefined, out: Comparison): void {
  const name = joinPath(field, path);
  const key = path.slice(path.lastIndexOf('.') + 1);
  const open = path ? openBeforeSealing(field, key, path, shape, gateway) : undefined;
  if (open) {
    if (!out.notCompared.some((seen) => seen.field === name)) out.notCompared.push({ field: name, reason: open });
    return;
  }
  if (Array.isArray(gateway) && Array.isArray(node)) {
    out.compared++;
    if (gateway.length !== node.length) out.mismatches.push({ field: `${name}.length`, gateway: gateway.length, node: node.length });
    const shared = Math.min(gateway.length, node.length);
    for (let i = 0; i < shared; i++) walk(field, `${path}[]`, gateway[i], node[i], shape, out);
    return;
  }
  if (isObject(gateway) && isObject(node)) {
    for (const child of Object.keys(node)) walk(field, path ? `${path}.${child}` : child, gateway[child], node[child], shape, out);
    for (const child of Object.keys(gateway)) {
      if (child in node) continue;
      const extra = joinPath(field, path ? `${path}.${child}` : child);
      if (!out.notCompared.some((seen) => seen.field === extra)) out.notCompared.push({ field: extra, reason: ONLY_GATEWAY });
    }
    return;
  }
  out.compared++;
  if (!leafEqual(gateway, node)) out.mismatches.push({ field: name, gateway, node });
}

/**
 * Compares two answers of `method`: both results (field by field), both errors (by code), or one
 * of each (a mismatch of `<method>.error`).
 */
export function compareAnswers(method: string, gateway: Answer, node: Answer, shape: BlockShape | undefined, out: Comparison): Comparison {
  if ('error' in gateway || 'error' in node) {
    out.compared++;
    const gatewayCode = 'error' in gateway ? gateway.error : undefined;
    const nodeCode = 'error' in node ? node.error : undefined;
    if (gatewayCode?.code !== nodeCode?.code || gatewayCode === undefined) {
      out.mismatches.push({
        field: `${method}.error`,
        gateway: gatewayCode ? `error ${gatewayCode.code}: ${gatewayCode.message}` : (gateway as { result: unknown }).result,
        node: nodeCode ? `error ${nodeCode.code}: ${nodeCode.message}` : (node as { result: unknown }).result,
      });
    }
    return out;
  }
  return compareValues(method, gateway.result, node.result, shape, out);
}

/**
 * Compares two lists matched by a key rather than by position (`eth_getLogs`: a gateway that
 * returns the logs of other blocks too gives extra entries, not a shifted list). The length is one
 * field; an entry only one side has is a mismatch of `<field>[]` naming its key.
 */
export function compareKeyedLists(
  field: string,
  gateway: readonly unknown[],
  node: readonly unknown[],
  keyOf: (entry: unknown, position: number, list: readonly unknown[]) => string,
  shape: BlockShape | undefined,
  out: Comparison,
): Comparison {
  out.compared++;
  if (gateway.length !== node.length) out.mismatches.push({ field: `${field}.length`, gateway: gateway.length, node: node.length });
  const nodeByKey = new Map(node.map((entry, position) => [keyOf(entry, position, node), entry] as const));
  const seen = new Set<string>();
  gateway.forEach((entry, position) => {
    const key = keyOf(entry, position, gateway);
    seen.add(key);
    const match = nodeByKey.get(key);
    if (match === undefined) out.mismatches.push({ field: `${field}[]`, gateway: `entry ${key}`, node: undefined });
    else walk(field, '[]', entry, match, shape, out);
  });
  for (const [key] of nodeByKey) if (!seen.has(key)) out.mismatches.push({ field: `${field}[]`, gateway: undefined, node: `entry ${key}` });
  return out;
}
