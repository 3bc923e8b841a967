/**
 * The closed catalogue of flashlog's own error codes (a JSON-RPC error's code is `RPC_<number>`,
 * one class per number below). A new failure picks a code here, so `code` stays a value a caller
 * can switch on and a log search can count.
 */
export const errorCodes = [
  'ATTRIBUTES_INVALID',
  'BINCODE_INVALID',
  'BINCODE_RANGE',
  'BINCODE_TRUNCATED',
  'BLOCKHASH_RANGE',
  'BLOCKS_INVALID_BLOCK',
  'BLOCKS_RECEIPTS_MISMATCH',
  'BLOCK_INVALID',
  'CONFIG_INVALID',
  'DERIVE_BATCH_INVALID',
  'DERIVE_BLOB_INVALID',
  'DERIVE_CHANNEL_INVALID',
  'DERIVE_DEPOSIT_INVALID',
  'DERIVE_FRAME_INVALID',
  'DERIVE_INCOMPLETE',
  'DERIVE_L1_INVALID',
  'DERIVE_L1_MISSING',
  'DERIVE_L1_REORG',
  'DERIVE_UNSUPPORTED',
  'DEVNET_ENGINE_FAILED',
  'DEVNET_L1_FAILED',
  'DEVNET_SETUP_FAILED',
  'ENCLAVE_ABORTED',
  'ENCLAVE_CLOSED',
  'ENCLAVE_ERROR',
  'ENCLAVE_IO',
  'ENCLAVE_PROTOCOL',
  'ENCLAVE_REFUSED',
  'ENCLAVE_TIMEOUT',
  'ENCLAVE_UNREACHABLE',
  'ENDPOINT_INVALID',
  'EXECUTION_FAILED',
  'FIXTURE_INVALID',
  'FIXTURE_UNREADABLE',
  'FORK_UNSUPPORTED',
  'FRAME_TOO_LARGE',
  'HEADER_INVALID',
  'HEADER_MISMATCH',
  'LOG_CHAIN_STAMP_INVALID',
  'LOG_CLOSED',
  'LOG_UNKNOWN_TOPIC',
  'OP_GETH_FAILED',
  'PATH_INVALID',
  'PREIMAGE_KEY',
  'ROLLUP_CONFIG_INVALID',
  'SIGNATURE_INVALID',
  'STATE_INVALID',
  'TRIE_INVALID',
  'TX_INVALID',
  'TX_TYPE_UNSUPPORTED',
  'UPSTREAM_INVALID',
  'VIEW_SNAPSHOT_MISMATCH',
  'WITNESS_ABORTED',
  'WITNESS_INCOMPLETE',
  'WITNESS_INVALID',
  'WITNESS_MISSING',
  'WITNESS_RANGE',
  'WITNESS_REORG',
  'WITNESS_RPC',
  'WORKER_FAILED',
] as const;
export type ErrorCode = (typeof errorCodes)[number] | `RPC_${number}`;

/**
 * The one error base of flashlog. Every error carries a stable `code` and says whether retrying
 * the same operation may succeed (`retryable`). JSON-RPC errors carry their numeric code.
 */
export class FlashlogError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  constructor(code: ErrorCode, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FlashlogError';
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

/** A setting (flag or FLASHLOG_* variable) with a value that does not fit its schema. Exit code 2. */
export class ConfigError extends FlashlogError {
  constructor(message: string) {
    super('CONFIG_INVALID', message);
    this.name = 'ConfigError';
  }
}

/** An error that maps onto a JSON-RPC error object. */
export class JsonRpcError extends FlashlogError {
  static readonly rpcCode: number = -32603;
  readonly rpcCode: number;
  readonly data: unknown;
  constructor(rpcCode: number, message: string, options: { data?: unknown; retryable?: boolean; cause?: unknown } = {}) {
    super(`RPC_${rpcCode}`, message, options);
    this.name = 'JsonRpcError';
    this.rpcCode = rpcCode;
    this.data = options.data;
  }
  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.rpcCode, message: this.message }
      : { code: this.rpcCode, message: this.message, data: this.data };
  }
}

export class ParseError extends JsonRpcError {
  static override readonly rpcCode = -32700;
  constructor(message = 'parse error') {
    super(-32700, message);
  }
}
export class InvalidRequestError extends JsonRpcError {
  static override readonly rpcCode = -32600;
  constructor(message: string) {
    super(-32600, message);
  }
}
export class MethodNotFoundError extends JsonRpcError {
  static override readonly rpcCode = -32601;
  /** `message` replaces the standard wording (the prover host answers jsonrpsee's "Method not found"). */
  constructor(method: string, message = `the method ${method} does not exist/is not available`) {
    super(-32601, message);
  }
}
export class InvalidParamsError extends JsonRpcError {
  static override readonly rpcCode = -32602;
  constructor(message: string) {
    super(-32602, message);
  }
}
export class InternalError extends JsonRpcError {
  static override readonly rpcCode = -32603;
  constructor(message: string) {
    super(-32603, message);
  }
}
/** -32000: the server-side class used by Ethereum nodes for upstream and execution failures. */
export class ServerError extends JsonRpcError {
  static override readonly rpcCode = -32000;
  constructor(message: string, options: { data?: unknown; retryable?: boolean; cause?: unknown } = {}) {
    super(-32000, message, options);
  }
}

/** -32001: the resource is not available here (a method refused in public mode, the enclave down). */
export class ResourceUnavailableError extends JsonRpcError {
  static override readonly rpcCode = -32001;
  constructor(message: string) {
    super(-32001, message);
  }
}
/** -32005: a limit was exceeded (rate, subscriptions per connection, simulations waiting); retry later. */
export class LimitExceededError extends JsonRpcError {
  static override readonly rpcCode = -32005;
  constructor(message: string) {
    super(-32005, message);
  }
}
/** -32016: execution took longer than its time limit (execution-apis' timeout code). */
export class ExecutionTimeoutError extends JsonRpcError {
  static override readonly rpcCode = -32016;
  constructor(message: string) {
    super(-32016, message);
  }
}
/** 3: execution reverted; `data` is the revert data, as nodes answer it. */
export class ExecutionRevertedError extends JsonRpcError {
  static override readonly rpcCode = 3;
  constructor(message: string, data?: unknown) {
    super(3, message, data === undefined ? {} : { data });
  }
}
/** 4: EIP-7966, sent but no receipt within the timeout; `data` is the transaction hash. */
export class ReceiptTimeoutError extends JsonRpcError {
  static override readonly rpcCode = 4;
  constructor(message: string, hash: string) {
    super(4, message, { data: hash });
  }
}

/**
 * eth_simulateV1's codes (execution-apis, `eth_simulateV1` errors): one class per code, so a
 * reader finds every place that answers one by its name.
 */
export class NonceTooLowError extends JsonRpcError {
  static override readonly rpcCode = -38010;
  constructor(message: string) {
    super(-38010, message);
  }
}
export class NonceTooHighError extends JsonRpcError {
  static override readonly rpcCode = -38011;
  constructor(message: string) {
    super(-38011, message);
  }
}
export class BaseFeeTooLowError extends JsonRpcError {
  static override readonly rpcCode = -38012;
  constructor(message: string) {
    super(-38012, message);
  }
}
export class IntrinsicGasTooLowError extends JsonRpcError {
  static override readonly rpcCode = -38013;
  constructor(message: string) {
    super(-38013, message);
  }
}
export class InsufficientFundsError extends JsonRpcError {
  static override readonly rpcCode = -38014;
  constructor(message: string) {
    super(-38014, message);
  }
}
export class BlockGasLimitReachedError extends JsonRpcError {
  static override readonly rpcCode = -38015;
  constructor(message: string) {
    super(-38015, message);
  }
}
export class BlockNumberOrderError extends JsonRpcError {
  static override readonly rpcCode = -38020;
  constructor(message: string) {
    super(-38020, message);
  }
}
export class BlockTimestampOrderError extends JsonRpcError {
  static override readonly rpcCode = -38021;
  constructor(message: string) {
    super(-38021, message);
  }
}
export class PrecompileMovedToItselfError extends JsonRpcError {
  static override readonly rpcCode = -38022;
  constructor(message: string) {
    super(-38022, message);
  }
}
export class MaxInitCodeSizeError extends JsonRpcError {
  static override readonly rpcCode = -38025;
  constructor(message: string) {
    super(-38025, message);
  }
}
export class TooManyBlocksError extends JsonRpcError {
  static override readonly rpcCode = -38026;
  constructor(message: string) {
    super(-38026, message);
  }
}

/**
 * The closed catalogue: every JSON-RPC code flashlog answers on its own account, by class. Codes
 * an upstream (or the devnet's EDR) answers pass through as plain `JsonRpcError`s unchanged.
 */
export const rpcErrorCatalogue = [
  ParseError,
  InvalidRequestError,
  MethodNotFoundError,
  InvalidParamsError,
  InternalError,
  ServerError,
  ResourceUnavailableError,
  LimitExceededError,
  ExecutionTimeoutError,
  ExecutionRevertedError,
  ReceiptTimeoutError,
  NonceTooLowError,
  NonceTooHighError,
  BaseFeeTooLowError,
  IntrinsicGasTooLowError,
  InsufficientFundsError,
  BlockGasLimitReachedError,
  BlockNumberOrderError,
  BlockTimestampOrderError,
  PrecompileMovedToItselfError,
  MaxInitCodeSizeError,
  TooManyBlocksError,
] as const;

/** Message of any thrown value, for logs. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
