// placeholder replaced below
export async function startLoad(_: unknown): Promise<{ stop(): Promise<void>; takeDeposits(): `0x${string}`[] }> {
  throw new Error('load generator not built yet');
}
