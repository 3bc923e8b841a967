import { describe, expect, it } from 'vitest';
import { handleText, type Dispatch } from './protocol.ts';

/** The one envelope parser in its two wordings: the same framing, flashlog's messages or jsonrpsee's. */
const dispatch: Dispatch = async (call) => {
  if (call.method === 'boom') throw new TypeError('secret internals');
  return { echoed: call.params ?? null };
};
const batch = JSON.stringify([
  { jsonrpc: '2.0', id: 1, method: 'echo', params: [1] },
  { jsonrpc: '1.0', id: 2, method: 'echo' },
  { jsonrpc: '2.0', id: 3, method: 'boom', params: [] },
  { jsonrpc: '2.0', id: 4, method: 'echo', params: 5 },
]);

describe('handleText wordings', () => {
  it('flashlog says what was wrong and where', async () => {
    expect(JSON.parse((await handleText(batch, dispatch, { maxBatch: 10 }))!)).toEqual([
      { jsonrpc: '2.0', id: 1, result: { echoed: [1] } },
      { jsonrpc: '2.0', id: 2, error: { code: -32600, message: 'invalid request[1]: jsonrpc: expected "2.0", got "1.0"' } },
      { jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'internal error: secret internals' } },
      { jsonrpc: '2.0', id: 4, error: { code: -32600, message: 'invalid request[3]: params: expected an array or object, got 5' } },
    ]);
    expect(JSON.parse((await handleText('{nope', dispatch, { maxBatch: 10 }))!).error.message).toMatch(/^parse error: /);
  });

  it('jsonrpsee answers its fixed texts and lets any params through', async () => {
    expect(JSON.parse((await handleText(batch, dispatch, { maxBatch: 10, wording: 'jsonrpsee' }))!)).toEqual([
      { jsonrpc: '2.0', id: 1, result: { echoed: [1] } },
      { jsonrpc: '2.0', id: 2, error: { code: -32600, message: 'Invalid request' } },
      { jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'Internal error' } },
      { jsonrpc: '2.0', id: 4, result: { echoed: 5 } },
    ]);
    expect(JSON.parse((await handleText('{nope', dispatch, { maxBatch: 10, wording: 'jsonrpsee' }))!)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error' },
    });
  });
});
