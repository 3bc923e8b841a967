/**
 * The safe and finalized heads, as a pure rule: a level is reported when it advances, never when
 * it stays or goes back (a node restarting from an older safe head publishes nothing new). Works
 * for both sources; what it is fed comes from the node's `safe` / `finalized` block tags or from
 * op-node's `optimism_syncStatus`.
 */
export type Level = 'safe' | 'finalized';
export interface LevelHead {
  readonly level: Level;
  readonly blockNumber: bigint;
  readonly blockHash: `0x${string}`;
}
export type LifecycleState = Readonly<Partial<Record<Level, bigint>>>;

/** The heads of `observed` that advanced, and the next state. */
export function advance(state: LifecycleState, observed: readonly LevelHead[]): { state: LifecycleState; advanced: LevelHead[] } {
  const next: Partial<Record<Level, bigint>> = { ...state };
  const advanced: LevelHead[] = [];
  for (const head of observed) {
    const last = next[head.level];
    if (last !== undefined && head.blockNumber <= last) continue;
    next[head.level] = head.blockNumber;
    advanced.push(head);
  }
  return { state: next, advanced };
}
