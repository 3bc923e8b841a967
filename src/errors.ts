/**
 * The one error base of flashlog. Every error carries a stable `code` and says whether retrying
 * the same operation may succeed (`retryable`). JSON-RPC errors carry their numeric code.
 */
export class FlashlogError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  constructor(code: string, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
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
  constructor(message = 'parse error') { super(-32700, message); }
}
export class InvalidRequestError extends JsonRpcError {
  static override readonly rpcCode = -32600;
  constructor(message: string) { super(-32600, message); }
}
export class MethodNotFoundError extends JsonRpcError {
  static override readonly rpcCode = -32601;
  constructor(method: string) { super(-32601, `the method ${method} does not exist/is not available`); }
}
export class InvalidParamsError extends JsonRpcError {
  static override readonly rpcCode = -32602;
  constructor(message: string) { super(-32602, message); }
}
export class InternalError extends JsonRpcError {
  static override readonly rpcCode = -32603;
  constructor(message: string) { super(-32603, message); }
}
/** -32000: the server-side class used by Ethereum nodes for upstream and execution failures. */
export class ServerError extends JsonRpcError {
  static override readonly rpcCode = -32000;
  constructor(message: string, options: { data?: unknown; retryable?: boolean; cause?: unknown } = {}) {
    super(-32000, message, options);
  }
}

/** Message of any thrown value, for logs. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
