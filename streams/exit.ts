/**
 * Resolves once everything written to `stream` so far has been handed to the operating system.
 * Writes to a pipe are asynchronous in Node: what the reader has not taken yet waits in the
 * stream's buffer, and `process.exit` drops it (`flashlog tail … | consumer` lost all but the first
 * 192 KiB that way). A write of nothing queues behind every earlier write, so its callback runs
 * once they are done. A reader that went away (EPIPE) has nothing left to wait for.
 */
export function written(stream: NodeJS.WritableStream & { writableLength?: number; destroyed?: boolean }): Promise<void> {
  if (stream.destroyed || stream.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off('error', done);
      stream.off('close', done);
      resolve();
    };
    stream.once('error', done);
    stream.once('close', done);
    stream.write('', () => done());
  });
}

/**
 * Ends the CLI process with `code` once stdout and stderr have been written out: the last step of
 * every command. Something may still hold the event loop (a socket a client library keeps, a
 * timer), so the process exits explicitly, but only after its output.
 */
export async function exitAfterOutput(code: number): Promise<never> {
  process.exitCode = code;
  await Promise.all([written(process.stdout), written(process.stderr)]);
  process.exit(code);
}

/**
 * A reader that closes its end of stdout (`flashlog tail … | head -n 5`) wants nothing more: the
 * command stops quietly, as `yes | head` does, instead of an unhandled EPIPE. Any other output
 * error is reported as one line on stderr, exit 1.
 */
export function stopWhenOutputCloses(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    process.stderr.write(`flashlog: cannot write to stdout: ${error.message}\n`);
    process.exit(1);
  });
}
