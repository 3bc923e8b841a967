import { FlashlogError } from '../errors.ts';

/** A flashblock the executor could not execute (retryable when the upstream may recover). */
export class ExecutionError extends FlashlogError {
  constructor(message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super('EXECUTION_FAILED', message, options);
  }
}
