import { gauge, type Registry } from '../obs/metrics.ts';

/**
 * What a canary's alerts read besides the mismatches: whether the gateway and the node serve one
 * chain, and whether the checker still judges anything. A checker that compares nothing passes no
 * judgement, so silence is exported too:
 *
 * - `flashlog_checker_chain_mismatch` 1 while the gateway and the node serve different chains;
 * - `flashlog_checker_idle` 1 once no height was judged for `idleAlertMs` (5 minutes by default);
 * - `flashlog_checker_last_judged_timestamp_seconds`, the Unix time of the last height judged (the
 *   start until then), for `time() - … > 300`.
 */
export interface CheckerHealth {
  /** Whether the two sides serve one chain (unknown until the first check: the gauge stays 0). */
  chains(agree: boolean): void;
  /** A height judged (compared or replaced). */
  judged(nowMs: number): void;
  /** How long nothing was judged; `newlyIdle` once when that passes the threshold, until the next judgement. */
  idle(nowMs: number): { readonly idleMs: number; readonly newlyIdle: boolean };
}

export function createCheckerHealth(options: {
  readonly startMs: number;
  readonly idleAlertMs: number;
  readonly registry?: Registry;
}): CheckerHealth {
  const metrics = options.registry
    ? {
        chainMismatch: gauge(
          options.registry,
          'flashlog_checker_chain_mismatch',
          '1 while the gateway and the node serve different chains (chain id or genesis hash): nothing is compared',
        ),
        idle: gauge(options.registry, 'flashlog_checker_idle', '1 while no pending height was judged for the idle threshold (5 minutes)'),
        lastJudged: gauge(
          options.registry,
          'flashlog_checker_last_judged_timestamp_seconds',
          'Unix time of the last pending height judged against the node (the start until one is)',
        ),
      }
    : undefined;
  let lastJudgedMs = options.startMs;
  let idle = false;
  metrics?.lastJudged.set(options.startMs / 1000);
  metrics?.idle.set(0);
  metrics?.chainMismatch.set(0);
  return {
    chains(agree) {
      metrics?.chainMismatch.set(agree ? 0 : 1);
    },
    judged(nowMs) {
      lastJudgedMs = nowMs;
      idle = false;
      metrics?.lastJudged.set(nowMs / 1000);
      metrics?.idle.set(0);
    },
    idle(nowMs) {
      const idleMs = nowMs - lastJudgedMs;
      const newlyIdle = !idle && idleMs >= options.idleAlertMs;
      if (newlyIdle) {
        idle = true;
        metrics?.idle.set(1);
      }
      return { idleMs, newlyIdle };
    },
  };
}
