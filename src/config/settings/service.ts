import { z } from 'zod';
import { port, bool, address, enumOf, setting, type SettingSpec } from './spec.ts';

/** Shared by every long-running command. */
export const serviceSettingSpecs = {
  logLevel: setting({
    schema: enumOf(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']),
    default: 'info',
    expects: 'trace|debug|info|warn|error|fatal|silent',
    describe: 'pino log level (JSON logs on stdout)',
  }),
  metricsHost: setting({
    schema: z.string().min(1),
    default: '127.0.0.1',
    expects: 'a host or IP to bind',
    describe: 'Prometheus metrics bind address',
  }),
  metricsPort: setting({
    schema: port.optional(),
    expects: 'a TCP port 0-65535 (0 = any free port)',
    describe:
      'Prometheus metrics port (GET /metrics); commands with their own HTTP port (run, serve, prover-host, devnet) serve /metrics there and open this one only when it is set',
  }),
  metrics: setting({ schema: bool, boolean: true, default: 'true', expects: 'true|false', describe: 'serve Prometheus metrics' }),
} satisfies Record<string, SettingSpec>;
