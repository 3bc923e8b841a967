import { firstValueFrom, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/settings.ts';
import { createEmbeddedLog } from './embedded/embedded.ts';
import { withTopicPrefix } from './topic-prefix.ts';
import { topics } from '../records/topics.ts';

describe('--topic-prefix', () => {
  it('keeps standard names in the code and prefixed ones in the log, for topics and consumer groups', async () => {
    const shared = createEmbeddedLog({ path: ':memory:' });
    const unichain = withTopicPrefix(shared, 'unichain.');
    const base = withTopicPrefix(shared, 'base.');
    await unichain.ensureTopics([{ name: topics.blocks }, { name: topics.proofReplies }]);
    await base.ensureTopics([{ name: topics.blocks }]);
    expect((await shared.listTopics()).sort()).toEqual([
      'base.flashlog.blocks',
      'unichain.flashlog.blocks',
      'unichain.flashlog.proofs.replies',
    ]);
    expect((await unichain.listTopics()).sort()).toEqual([topics.blocks, topics.proofReplies]);

    const [position] = await unichain.produce([{ topic: topics.blocks, key: '1', value: 'u' }]);
    await base.produce([{ topic: topics.blocks, key: '1', value: 'b' }]);
    expect(position!.topic).toBe(topics.blocks);
    // A name given in full (a proof request's replyTopic from an outside client) is not prefixed twice.
    await unichain.produce([{ topic: 'unichain.flashlog.proofs.replies', key: 'r', value: 'reply' }]);
    expect((await shared.endOffsets('unichain.flashlog.proofs.replies'))[0]!.offset).toBe(1n);

    const consumer = unichain.consumer({ topics: [topics.blocks], group: 'flashlog-serve', from: 'earliest' });
    const [record] = await firstValueFrom(consumer.records$.pipe(take(1), toArray()));
    expect(record).toMatchObject({ topic: topics.blocks, value: 'u' });
    await consumer.commit([{ topic: topics.blocks, partition: 0, offset: 1n }]);
    await consumer.close();
    // The group is the prefixed one: the same group name under another prefix starts from the beginning.
    const again = base.consumer({ topics: [topics.blocks], group: 'flashlog-serve', from: 'earliest' });
    expect(await firstValueFrom(again.records$)).toMatchObject({ topic: topics.blocks, value: 'b' });
    await again.close();
    expect(withTopicPrefix(shared, '')).toBe(shared);
    await shared.close();
  });

  it('is a setting of every command that opens the log, refused with the flag named when not a topic name', () => {
    expect(parseConfig(['--topic-prefix', 'unichain.'], {}, ['topicPrefix']).config.topicPrefix).toBe('unichain.');
    expect(parseConfig([], { FLASHLOG_TOPIC_PREFIX: 'op-mainnet-' }, ['topicPrefix']).config.topicPrefix).toBe('op-mainnet-');
    expect(parseConfig([], {}, ['topicPrefix']).config.topicPrefix).toBe('');
    expect(() => parseConfig(['--topic-prefix', 'uni chain/'], {}, ['topicPrefix'])).toThrow(
      /--topic-prefix \(or FLASHLOG_TOPIC_PREFIX\): got "uni chain\/"/,
    );
  });
});
