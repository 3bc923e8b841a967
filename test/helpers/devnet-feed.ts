import WebSocket from 'ws';
import { expect } from 'vitest';
import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { startBlock, extendBlock, type AssembledBlock } from '../../src/chain/assemble.ts';
import type { Flashblock } from '../../src/schemas/flashblock.ts';
import { decodeFrame } from '../../src/wire/frame.ts';
import type { Devnet } from '../../devnet/edr/devnet.ts';

/** Helpers for tests that watch a devnet's flashblocks feed and compare it with its chain. */
export async function rpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

export interface Frame {
  readonly binary: boolean;
  readonly flashblock: Flashblock;
  readonly json: Record<string, unknown>;
}

/** Connects to the feed; every frame is decoded with the project's decoder (schema included). */
export async function subscribe(url: string): Promise<{ frames: Frame[]; failures: string[]; close(): void }> {
  const frames: Frame[] = [];
  const failures: string[] = [];
  const socket = new WebSocket(url);
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    const decoded = decodeFrame(isBinary ? new Uint8Array(data) : data.toString('utf8'), { maxBytes: 16 * 1024 * 1024 });
    if (!decoded.ok) failures.push(`${decoded.reason}: ${decoded.detail}`);
    else frames.push({ binary: isBinary, flashblock: decoded.flashblock, json: decoded.json });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return { frames, failures, close: () => socket.close() };
}

export async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits until `count` blocks are sealed (counted from now); returns their numbers. */
export function sealedBlocks(net: Devnet, count: number): Promise<bigint[]> {
  return new Promise((resolve) => {
    const numbers: bigint[] = [];
    const off = net.onSealed((block) => {
      numbers.push(block.number);
      if (numbers.length === count) {
        off();
        resolve(numbers);
      }
    });
  });
}

/**
 * Waits until the feed has delivered a flashblock of a block after `number` (the devnet sends the
 * next index 0 right after sealing), so the last flashblock of `number` is in hand, not in flight.
 */
export async function caughtUp(feed: { frames: readonly Frame[] }, number: bigint): Promise<void> {
  await until(() => feed.frames.some((frame) => BigInt(frame.flashblock.metadata.block_number) > number), 5000);
}

/**
 * Assembles every block whose index 0 was received and whose last flashblock is in hand, keyed by
 * number; indices must be contiguous. The block of the last frame received is left out: it is still
 * open (the devnet sends the next block's index 0 right after a seal), and it may be sealed, with
 * flashblocks this stream never got, by the time a test reads it from the chain.
 */
export function assemble(frames: readonly Frame[]): Map<bigint, { block: AssembledBlock; frames: Flashblock[] }> {
  const blocks = new Map<bigint, { block: AssembledBlock; frames: Flashblock[] }>();
  for (const { flashblock } of frames) {
    const number = BigInt(flashblock.metadata.block_number);
    const known = blocks.get(number);
    if (flashblock.index === 0) blocks.set(number, { block: startBlock(flashblock), frames: [flashblock] });
    else if (known) {
      expect(flashblock.index).toBe(known.block.index + 1);
      expect(flashblock.payload_id).toBe(known.block.payloadId);
      known.block = extendBlock(known.block, flashblock);
      known.frames.push(flashblock);
    }
  }
  const open = frames.at(-1);
  if (open) blocks.delete(BigInt(open.flashblock.metadata.block_number));
  return blocks;
}

/** Sends `count` ETH transfers from account `from`, spaced by `gapMs`; returns their hashes. */
export async function sendTransfers(net: Devnet, from: number, count: number, gapMs: number): Promise<Hex[]> {
  const account = privateKeyToAccount(net.accounts[from]!.privateKey);
  const hashes: Hex[] = [];
  let nonce = Number(await rpc<Hex>(net.rpcUrl, 'eth_getTransactionCount', [account.address, 'pending']));
  for (let i = 0; i < count; i++) {
    const raw = await account.signTransaction({
      chainId: net.chainId,
      type: 'eip1559',
      nonce: nonce++,
      to: net.accounts[(from + 1) % 10]!.address,
      value: 1000n + BigInt(i),
      gas: 21_000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1_000n,
    });
    hashes.push(await rpc<Hex>(net.rpcUrl, 'eth_sendRawTransaction', [raw]));
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  return hashes;
}

export interface RpcBlock {
  number: Hex;
  hash: Hex;
  parentHash: Hex;
  transactions: Hex[];
  gasUsed: Hex;
  receiptsRoot: Hex;
  logsBloom: Hex;
  stateRoot: Hex;
  withdrawalsRoot: Hex;
}
