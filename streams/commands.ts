import type { Command } from './command.ts';
import { checkGatewayCommand } from './check-gateway.ts';
import { devnetCommand } from './devnet.ts';
import { enclaveCommand } from './enclave.ts';
import { executeBlockCommand } from './execute-block.ts';
import { decodeBatchCommand } from './decode-batch.ts';
import { proverHostCommand } from './prover-host.ts';
import { proverBridgeCommand } from './prover-bridge.ts';
import { proveCommand } from './prove.ts';
import { proofRequestCommand } from './proof-request.ts';
import { verifyProposalCommand } from './verify-proposal.ts';
import { ingestCommand } from './ingest.ts';
import { runCommand } from './run.ts';
import { serveCommand } from './serve.ts';
import { nodeStatusCommand } from './node-status.ts';
import { schemaCommand } from './schema.ts';
import { tailCommand } from './tail.ts';

/** Every CLI command, in the order --help lists them. Add a command here. */
export const commands: readonly Command[] = [
  enclaveCommand,
  proverHostCommand,
  proverBridgeCommand,
  proofRequestCommand,
  proveCommand,
  verifyProposalCommand,
  executeBlockCommand,
  decodeBatchCommand,
  runCommand,
  ingestCommand,
  serveCommand,
  tailCommand,
  schemaCommand,
  nodeStatusCommand,
  checkGatewayCommand,
  devnetCommand,
];
