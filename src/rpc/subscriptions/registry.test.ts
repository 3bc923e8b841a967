import { describe, expect, it } from 'vitest';
import { moduleNamesIn } from '../../../test/helpers/module-names.ts';
import type { SourceKind } from '../../config/source-mode.ts';
import { InvalidParamsError } from '../../errors.ts';
import { parseParam } from '../../schemas/issue.ts';
import { subscriptionKinds } from './registry.ts';

/** The kinds registry is the one place a subscription kind is listed: every file under kinds/ is in it, once, under its own name. */
describe('the subscription kinds registry', () => {
  it('lists every file under kinds/ exactly once, named as its file', () => {
    const files = moduleNamesIn(new URL('./kinds/', import.meta.url));
    const names = subscriptionKinds.map((kind) => kind.name);
    expect([...names].sort()).toEqual(files);
    expect(new Set(names).size).toBe(names.length);
  });

  it('offers newHeads and logs on a flashblocks chain only with an upstream, and reads them from the view on a blocks-source chain', () => {
    const offered = (source: SourceKind, upstream: boolean) =>
      Object.fromEntries(subscriptionKinds.map((kind) => [kind.name, kind.reads({ source, upstream }) ?? null]));
    expect(offered('flashblocks', false)).toEqual({
      pendingLogs: 'logs',
      newHeads: null,
      logs: null,
      newFlashblocks: 'flashblocks',
      newFlashblockTransactions: 'flashblocks',
    });
    expect(offered('flashblocks', true)).toMatchObject({ newHeads: 'canonical', logs: 'canonical' });
    expect(offered('blocks', false)).toMatchObject({ newHeads: 'flashblocks', logs: 'logs' });
  });

  it("parses each kind's params with its schema; a bad one is -32602 naming the field", () => {
    const kind = (name: string) => subscriptionKinds.find((spec) => spec.name === name)!;
    const address = `0x${'ab'.repeat(20)}`;
    const parsed = parseParam(
      kind('pendingLogs').params,
      ['pendingLogs', { address: address.toUpperCase().replace('0X', '0x') }],
      'params',
    );
    expect(kind('pendingLogs').logFilter!(parsed)).toEqual({ addresses: new Set([address]), topics: [] });
    expect(parseParam(kind('newFlashblockTransactions').params, ['newFlashblockTransactions', true], 'params')).toEqual({
      full: true,
      txFilter: null,
    });
    const bad = (name: string, option: unknown) => () => parseParam(kind(name).params, [name, option], 'params');
    expect(bad('pendingLogs', { topics: [null, '0x12'] })).toThrow(InvalidParamsError);
    expect(bad('pendingLogs', { topics: [null, '0x12'] })).toThrow(/^params\[1\]\.topics\[1\]: .+, got "0x12"$/);
    expect(bad('logs', 5)).toThrow('params[1]: expected a filter object {address, topics}, got 5');
    expect(bad('newFlashblockTransactions', 5)).toThrow('params[1]: expected false, true or a filter {address, topics}, got 5');
  });
});
