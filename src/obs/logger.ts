import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * pino JSON logger; `destination` defaults to `fd` (stdout, 1; stderr, 2, for a command whose
 * stdout is its result), synchronous so a crash loses no line.
 */
export function createLogger(options: { level: string; name?: string; destination?: DestinationStream; fd?: 1 | 2 }): Logger {
  return pino(
    { level: options.level, base: { name: options.name ?? 'flashlog' }, timestamp: pino.stdTimeFunctions.isoTime },
    options.destination ?? pino.destination({ fd: options.fd ?? 1, sync: true }),
  );
}

/**
 * Logs a reason once per key, then only counts. For hostile input that can arrive 10,000 times a
 * second: the first occurrence of each reason is logged with its detail, the rest go to a metric.
 */
export function createOnceLogger(logger: Logger, limit = 1000): (key: string, detail: Record<string, unknown>, message: string) => void {
  const seen = new Set<string>();
  return (key, detail, message) => {
    if (seen.has(key)) return;
    if (seen.size < limit) seen.add(key);
    logger.warn({ ...detail, reason: key }, message);
  };
}
