import { FlashlogError } from '../../errors.ts';

/** A refusal: the enclave answers EnclaveResponse::Error with this text and signs nothing. */
export class EnclaveRefusal extends FlashlogError {
  constructor(message: string) {
    super('ENCLAVE_REFUSED', message);
    this.name = 'EnclaveRefusal';
  }
}
