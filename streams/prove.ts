import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { filter, firstValueFrom, map, race, timer, fromEvent } from 'rxjs';
import { ConfigError, errorMessage } from '../src/errors.ts';
import { openLog } from '../src/log/open.ts';
import { topics } from '../src/records/topics.ts';
import { describeIssue, proofReplyRecordSchema, type ProofReplyRecord } from '../src/records/proofs.ts';
import { proofRequestSchema } from '../src/records/proofs.ts';
import { logSettings, type Command } from './command.ts';

/**
 * `flashlog prove REQUEST.json`: produces a proof request (Base's ProofRequest JSON) to
 * flashlog.proofs.requests and waits for its reply. Prints the reply record as JSON on stdout.
 * Exit 0 only with a proof; 1 for an error reply or no reply within --timeout; 2 for bad input.
 */
export const proveCommand: Command = {
  name: 'prove',
  summary: 'send a proof request over the log and wait for its reply',
  usage: 'flashlog prove REQUEST.json [--timeout S] [log options]',
  settings: ['logLevel', ...logSettings, 'timeout'],
  longRunning: false,
  async run(ctx, positionals) {
    const [file, ...extra] = positionals;
    if (!file || extra.length > 0) throw new ConfigError(`REQUEST.json: expected exactly one file, got ${JSON.stringify(positionals)}`);
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new ConfigError(`${file}: cannot read a JSON ProofRequest: ${errorMessage(error)}`);
    }
    const parsed = proofRequestSchema.safeParse(json);
    if (!parsed.success) throw new ConfigError(`${file}: ${describeIssue(parsed.error, 'request')}`);
    const log = await openLog(ctx.config, ctx.logger);
    ctx.shutdown.register('log', () => log.close());
    const requestId = randomUUID();
    // Read replies from the end offsets as of now, so the reply cannot slip past.
    const ends = await log.endOffsets(topics.proofReplies);
    const consumer = log.consumer({ topics: [topics.proofReplies], from: 'latest', seek: ends });
    ctx.shutdown.register('consumer', () => consumer.close());
    const reply$ = consumer.records$.pipe(
      filter((record) => record.key === requestId),
      map((record) => proofReplyRecordSchema.parse(JSON.parse(record.value))),
    );
    const waiting = firstValueFrom(
      race(
        reply$,
        timer(ctx.config.timeout * 1000).pipe(map(() => 'timeout' as const)),
        fromEvent(ctx.shutdown.signal, 'abort').pipe(map(() => 'aborted' as const)),
      ),
    );
    await log.produce([
      {
        topic: topics.proofRequests,
        key: requestId,
        value: JSON.stringify({ v: 1, requestId, replyTopic: topics.proofReplies, requestedAt: Date.now(), request: parsed.data }),
      },
    ]);
    ctx.logger.info({ requestId, claimed: parsed.data.claimed_l2_block_number }, 'proof request produced; waiting for the reply');
    const reply: ProofReplyRecord | 'timeout' | 'aborted' = await waiting;
    if (reply === 'timeout' || reply === 'aborted') {
      process.stderr.write(
        `flashlog prove: no reply for request ${requestId} ${reply === 'timeout' ? `within ${ctx.config.timeout}s` : '(interrupted)'}\n`,
      );
      return 1;
    }
    process.stdout.write(`${JSON.stringify(reply)}\n`);
    if (reply.error) {
      process.stderr.write(`flashlog prove: request ${requestId} failed: ${reply.error.code} ${reply.error.message}\n`);
      return 1;
    }
    return 0;
  },
};
