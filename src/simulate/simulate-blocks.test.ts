import { p256 } from '@noble/curves/nist.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatHex, padHex, toHex, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { JsonRpcError } from '../errors.ts';
import { fixedRules } from './chain-rules.ts';
import { simulate, type SimulationContext } from './simulate-blocks.ts';
import type { SimulatePayload } from './payload.ts';

/** A chain whose every account is empty: the engine alone decides the answers. */
function context(): SimulationContext {
  const { common, scheduled, precompiles } = fixedRules(8453n, 'prague');
  return {
    base: {
      number: 100n,
      hash: `0x${'11'.repeat(32)}`,
      timestamp: 1_700_000_000n,
      gasLimit: 30_000_000n,
      gasUsed: 0n,
      baseFeePerGas: 0n,
      excessBlobGas: 0n,
      blobGasUsed: 0n,
      miner: `0x${'00'.repeat(20)}`,
      difficulty: 0n,
    },
    source: { account: async () => undefined, storage: async () => 0n },
    blockHash: async () => `0x${'22'.repeat(32)}`,
    common,
    scheduled,
    precompiles,
    gasCap: 50_000_000n,
  };
}

type Block = { calls: { status: Hex; returnData: Hex; gasUsed: Hex }[] };
const run = async (payload: unknown) => (await simulate(payload as SimulatePayload, context())) as unknown as Block[];
const P256VERIFY = '0x0000000000000000000000000000000000000100';

/** RIP-7212 input: hash, r, s, x, y (32 bytes each). */
function p256Input(tamper = false): Hex {
  const secret = p256.utils.randomSecretKey();
  const digest = sha256(new TextEncoder().encode('flashlog'));
  const signature = p256.Signature.fromBytes(p256.sign(digest, secret, { prehash: false }), 'compact');
  const point = p256.Point.fromBytes(p256.getPublicKey(secret, false));
  const r = padHex(toHex(signature.r), { size: 32 });
  const s = padHex(toHex(tamper ? signature.s + 1n : signature.s), { size: 32 });
  return concatHex([bytesToHex(digest), r, s, padHex(toHex(point.x), { size: 32 }), padHex(toHex(point.y), { size: 32 })]);
}

describe('simulate on an OP Stack chain by ID (fixedRules)', () => {
  it('serves RIP-7212 P256VERIFY at 0x100 for 3,450 gas: 1 for a good signature, empty for a bad one', async () => {
    const [block] = await run({
      blockStateCalls: [
        {
          calls: [
            { to: P256VERIFY, input: p256Input() },
            { to: P256VERIFY, input: p256Input(true) },
          ],
        },
      ],
    });
    const [good, bad] = block!.calls;
    expect(good!.status).toBe('0x1');
    expect(good!.returnData).toBe(padHex('0x1', { size: 32 }));
    expect(bad!.returnData).toBe('0x');
  });

  it("charges 3,450 gas, not EIP-7951's 6,900: a STATICCALL with 3,450 gas verifies, with 3,449 it fails", async () => {
    // copies the calldata, STATICCALLs 0x100 with the given gas, returns the 32-byte answer (0 on failure)
    const caller = (gas: number) =>
      `0x366000600037602060a0366000610100${gas.toString(16).padStart(4, '0').replace(/^/, '61')}fa50602060a0f3`;
    const enough = '0x00000000000000000000000000000000000000d1';
    const short = '0x00000000000000000000000000000000000000d2';
    const input = p256Input();
    const [block] = await run({
      blockStateCalls: [
        {
          stateOverrides: { [enough]: { code: caller(3_450) }, [short]: { code: caller(3_449) } },
          calls: [
            { to: enough, input },
            { to: short, input },
          ],
        },
      ],
    });
    expect(block!.calls[0]!.returnData).toBe(padHex('0x1', { size: 32 }));
    expect(block!.calls[1]!.returnData).toBe(padHex('0x0', { size: 32 }));
  });

  it('refuses to move an account that is not a precompile, and a move to the same address (-38022)', async () => {
    const other = '0x00000000000000000000000000000000000000c1';
    await expect(
      run({
        blockStateCalls: [{ stateOverrides: { [other]: { movePrecompileToAddress: '0x00000000000000000000000000000000000000c2' } } }],
      }),
    ).rejects.toThrow(`account ${other} is not a precompile`);
    const error = await run({ blockStateCalls: [{ stateOverrides: { [P256VERIFY]: { movePrecompileToAddress: P256VERIFY } } }] }).catch(
      (e: unknown) => e,
    );
    expect((error as JsonRpcError).rpcCode).toBe(-38022);
  });

  it('code set on a precompile address replaces the precompile (as geth), and a moved one answers at its new address', async () => {
    const moved = '0x00000000000000000000000000000000000000c3';
    // PUSH1 0x2a PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN: returns 42
    const code = '0x602a60005260206000f3';
    const [block] = await run({
      blockStateCalls: [
        {
          stateOverrides: { [P256VERIFY]: { code, movePrecompileToAddress: moved } },
          calls: [
            { to: P256VERIFY, input: p256Input() },
            { to: moved, input: p256Input() },
          ],
        },
      ],
    });
    expect(block!.calls[0]!.returnData).toBe(padHex('0x2a', { size: 32 }));
    expect(block!.calls[1]!.returnData).toBe(padHex('0x1', { size: 32 }));
  });

  it('an override without a move removes the precompile: code runs in its place, a balance alone leaves an empty account', async () => {
    const sha256Address = '0x0000000000000000000000000000000000000002';
    const code = '0x602a60005260206000f3';
    const [plain] = await run({ blockStateCalls: [{ calls: [{ to: sha256Address, input: '0x' }] }] });
    expect(plain!.calls[0]!.returnData, 'sha256 of nothing').toBe('0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    const [withCode] = await run({
      blockStateCalls: [{ stateOverrides: { [sha256Address]: { code } }, calls: [{ to: sha256Address, input: '0x' }] }],
    });
    expect(withCode!.calls[0]!.returnData).toBe(padHex('0x2a', { size: 32 }));
    const [withBalance] = await run({
      blockStateCalls: [{ stateOverrides: { [sha256Address]: { balance: '0x1' } }, calls: [{ to: sha256Address, input: '0x' }] }],
    });
    expect(withBalance!.calls[0]!.returnData).toBe('0x');
  });

  it("checks a call's own gas against the block gas limit before the request's budget lowers it (-38015)", async () => {
    const payload = { blockStateCalls: [{ blockOverrides: { gasLimit: '0x1c9c380' }, calls: [{ to: P256VERIFY, gas: '0x1c9c381' }] }] };
    const error = await run(payload).catch((e: unknown) => e);
    expect((error as JsonRpcError).rpcCode).toBe(-38015);
  });
});
