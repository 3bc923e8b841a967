/**
 * A successful EIP-1559 transfer's receipt as a node answers it (21000 gas, an empty bloom), for
 * scripted upstreams; `fields` names the transaction, the block, the parties and the logs.
 */
export function transferReceipt(fields: {
  readonly transactionHash: string;
  readonly transactionIndex: string;
  readonly blockHash: string;
  readonly blockNumber: string;
  readonly from: string;
  readonly to: string | null;
  readonly logs: readonly Record<string, unknown>[];
}) {
  const { logs, ...where } = fields;
  return {
    ...where,
    cumulativeGasUsed: '0x5208',
    gasUsed: '0x5208',
    contractAddress: null,
    logsBloom: `0x${'0'.repeat(512)}`,
    status: '0x1',
    type: '0x2',
    logs: [...logs],
  };
}
