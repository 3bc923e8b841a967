import { take, takeUntil, timer, fromEvent, lastValueFrom, defaultIfEmpty, tap, switchMap, EMPTY } from 'rxjs';
import { ConfigError } from '../src/errors.ts';
import { allTopics } from '../src/records/topics.ts';
import { logSettings, type Command } from './command.ts';
import { openChainLog } from '../src/log/open-chain-log.ts';

/**
 * `flashlog tail TOPIC`: prints records as JSON lines, one per record:
 * {"topic","partition","offset","key","timestamp","value"} with value parsed when it is JSON.
 * With --from-beginning and without --follow it stops at the end offsets seen at start;
 * otherwise it follows new records until Ctrl-C.
 */
export const tailCommand: Command = {
  name: 'tail',
  summary: 'print the records of a topic as JSON lines',
  usage: `flashlog tail TOPIC [--from-beginning] [--limit N] [--follow] [--rpc URL]   (topics: ${allTopics.join(', ')})`,
  // --rpc: the node whose chain the log must hold (checked, never stamped).
  settings: ['logLevel', ...logSettings, 'fromBeginning', 'limit', 'follow', 'rpc', 'rpcTimeoutMs'],
  longRunning: false,
  async run(ctx, positionals) {
    const topic = positionals[0];
    if (!topic || positionals.length > 1)
      throw new ConfigError(`TOPIC: expected exactly one topic name, got ${JSON.stringify(positionals)}`);
    const log = await openChainLog(ctx, { writer: false, rpcUrl: ctx.config.rpc });
    ctx.shutdown.register('log', () => log.close());
    const known = await log.listTopics();
    if (!known.includes(topic)) throw new ConfigError(`TOPIC: got "${topic}", expected one of ${known.join(', ')}`);
    const ends = await log.endOffsets(topic);
    const remaining = new Map(ends.map((end) => [end.partition, end.offset]));
    const consumer = log.consumer({ topics: [topic], from: ctx.config.fromBeginning ? 'earliest' : 'latest' });
    ctx.shutdown.register('consumer', () => consumer.close());
    const caughtUp = () => [...remaining.values()].every((offset) => offset <= 0n);
    // Reading from the beginning stops at the end unless --follow; reading from the end follows.
    const stopAtEnd = ctx.config.fromBeginning && !ctx.config.follow;
    // Backpressure: a reader slower than the log (a pipe into a consumer) pauses the log's
    // consumer whenever stdout's buffer is full (write answers false) and resumes it on 'drain', so
    // the process holds about one buffer of output, not the whole topic.
    const stdout = process.stdout;
    let printed = 0;
    let paused = false;
    // Records handed to stdout and not yet written out to the OS: now, and the most at once.
    let buffered = 0;
    let mostBuffered = 0;
    let mostBufferedBytes = 0;
    let corked = false;
    const print = (line: string) => {
      // Lines handed over in one turn of the event loop go out as one write (writev).
      if (!corked) {
        corked = true;
        stdout.cork();
        process.nextTick(() => {
          corked = false;
          stdout.uncork();
        });
      }
      buffered++;
      mostBuffered = Math.max(mostBuffered, buffered);
      const more = stdout.write(line, () => buffered--);
      mostBufferedBytes = Math.max(mostBufferedBytes, stdout.writableLength);
      if (more || paused) return;
      paused = true;
      consumer.pause();
      stdout.once('drain', () => {
        paused = false;
        consumer.resume();
      });
    };
    const records$ = consumer.records$.pipe(
      ctx.config.limit ? take(ctx.config.limit) : tap(),
      takeUntil(fromEvent(ctx.shutdown.signal, 'abort')),
    );
    if (stopAtEnd && ends.every((end) => end.offset === 0n)) return 0;
    await lastValueFrom(
      records$.pipe(
        tap((record) => {
          let value: unknown = record.value;
          try {
            value = JSON.parse(record.value);
          } catch {
            /* not JSON: print as a string */
          }
          print(
            `${JSON.stringify({ topic: record.topic, partition: record.partition, offset: Number(record.offset), key: record.key, timestamp: record.timestamp, value })}\n`,
          );
          printed++;
          const end = remaining.get(record.partition);
          if (end !== undefined && record.offset + 1n >= end) remaining.set(record.partition, 0n);
        }),
        takeUntil(stopAtEnd ? timer(0, 50).pipe(switchMap(() => (caughtUp() ? timer(0) : EMPTY))) : EMPTY),
        defaultIfEmpty(undefined),
      ),
    );
    // mostBuffered: the records read from the log ahead of what the reader took (bounded by the
    // backpressure above; cli-pipe.test.ts holds it to a bound).
    ctx.logger.debug({ printed, mostBuffered, mostBufferedBytes }, 'tail done');
    return 0;
  },
};
