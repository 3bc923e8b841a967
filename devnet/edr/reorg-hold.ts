/**
 * The tail of a `--reorg-every` block: no new transaction is taken in the second half of its
 * flashblocks, so the transaction the block leaves out at its seal was pre-confirmed at least half
 * a block before (with 2 s blocks, 1 s), and a gateway serves the version it will withdraw for that
 * long instead of the last 200 ms or less. A checker polling the gateway then observes the
 * replacement by design, not by luck (test/e2e/check-gateway-devnets.test.ts). A transaction
 * submitted meanwhile waits: its eth_sendRawTransaction answers once the next block has opened.
 */
export interface ReorgHold {
  /** After a flashblock of block `number` was sent (`sent` flashblocks so far): holds if it is a reorg block's tail. */
  afterFlashblock(number: bigint, sent: number): void;
  /** Whether new transactions wait now. */
  readonly holding: () => boolean;
  /**
   * Runs `send` once new transactions are taken; `send` answers null when it found the hold on
   * again (it checks `holding()` inside the engine's exclusive section), and is then run again
   * once released.
   */
  whenTaking<T>(send: () => Promise<T | null>): Promise<T>;
  /** The block was sealed (or the producer stops): new transactions are taken again. */
  release(): void;
}

/**
 * @example const hold = createReorgHold({ flashblocksPerBlock: 10, reorgEvery: 5 });
 * hold.afterFlashblock(10n, 5); hold.holding() // true: block 10's flashblocks 5-10 take nothing new
 */
export function createReorgHold(options: { readonly flashblocksPerBlock: number; readonly reorgEvery: number }): ReorgHold {
  const { flashblocksPerBlock, reorgEvery } = options;
  const tail = Math.floor(flashblocksPerBlock / 2);
  let held: { readonly number: bigint; readonly released: Promise<void>; release(): void } | undefined;
  const release = () => {
    const was = held;
    held = undefined;
    was?.release();
  };
  return {
    afterFlashblock(number, sent) {
      // A hold of a block that never sealed (its seal failed) ends with the next block.
      if (held && held.number !== number) release();
      if (held || reorgEvery <= 0 || tail === 0 || number % BigInt(reorgEvery) !== 0n || sent < flashblocksPerBlock - tail) return;
      let resolve = () => {};
      const released = new Promise<void>((done) => (resolve = done));
      held = { number, released, release: resolve };
    },
    holding: () => held !== undefined,
    async whenTaking(send) {
      for (;;) {
        if (held) await held.released;
        const result = await send();
        if (result !== null) return result;
      }
    },
    release,
  };
}
