import { describe, expect, it } from 'vitest';
import { diffAsOverrides, layerOverrides, stateOverridesParam } from './state-overrides.ts';
import { InvalidParamsError } from '../errors.ts';

const A = '0x00000000000000000000000000000000000000aa';
const slot = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

describe('state overrides', () => {
  it('parses a caller override, lower-cases addresses and names a bad field', () => {
    expect(stateOverridesParam({ [A.toUpperCase().replace('0X', '0x')]: { balance: '0x1' } }, 'params[2]')).toEqual({
      [A]: { balance: '0x1' },
    });
    expect(stateOverridesParam(undefined, 'params[2]')).toEqual({});
    expect(() => stateOverridesParam({ [A]: { balance: 'ten' } }, 'params[2]')).toThrow(/params\[2\]\.0x0+aa\.balance/);
    expect(() => stateOverridesParam({ [A]: { state: {}, stateDiff: {} } }, 'params[2]')).toThrow(InvalidParamsError);
    expect(() => stateOverridesParam({ nope: {} }, 'params[2]')).toThrow(/params\[2\]/);
  });

  it('lays the caller on top of the pending diff: fields win, stateDiff merges, state replaces', () => {
    const pending = diffAsOverrides({ [A]: { balance: '0x5', nonce: '0x2', storage: { [slot(1)]: slot(7), [slot(2)]: slot(8) } } });
    expect(layerOverrides(pending, { [A]: { balance: '0x9', stateDiff: { [slot(2)]: slot(9) } } })).toEqual({
      [A]: { balance: '0x9', nonce: '0x2', stateDiff: { [slot(1)]: slot(7), [slot(2)]: slot(9) } },
    });
    expect(layerOverrides(pending, { [A]: { state: { [slot(3)]: slot(1) } } })).toEqual({
      [A]: { balance: '0x5', nonce: '0x2', state: { [slot(3)]: slot(1) } },
    });
    expect(layerOverrides({ [A]: { state: { [slot(1)]: slot(1) } } }, { [A]: { stateDiff: { [slot(2)]: slot(2) } } })).toEqual({
      [A]: { state: { [slot(1)]: slot(1), [slot(2)]: slot(2) } },
    });
  });
});
