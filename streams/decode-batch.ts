import { readFileSync } from 'node:fs';
import { hexToBytes, isHex } from 'viem';
import type { Config } from '../src/config/settings.ts';
import { decodeBatcherData, type BatcherInput } from '../src/derive/batcher-data.ts';
import { batcherReportJson } from '../src/derive/batcher-report.ts';
import { blobSizeBytes } from '../src/derive/blob.ts';
import { derivationRules } from '../src/derive/rules.ts';
import type { SpanBatchChain } from '../src/derive/span-batch.ts';
import { ConfigError, errorMessage } from '../src/errors.ts';
import type { Command } from './command.ts';

/** An argument's bytes: inline 0x-hex, `-` for stdin, or a file holding raw bytes or hex text. */
function bytesOf(argument: string): Uint8Array {
  if (argument.startsWith('0x')) {
    if (!isHex(argument, { strict: true }) || argument.length % 2 !== 0)
      throw new ConfigError(`INPUT "${argument.slice(0, 20)}…": not even-length 0x-hex`);
    return hexToBytes(argument);
  }
  let raw: Buffer;
  try {
    raw = readFileSync(argument === '-' ? 0 : argument);
  } catch (error) {
    throw new ConfigError(`INPUT ${argument}: ${errorMessage(error)}`);
  }
  if (raw.length === 0) throw new ConfigError(`INPUT ${argument}: empty`);
  // Hex text, also as xxd -p or fold write it (line breaks and spaces between digits).
  const text = raw.toString('latin1').replace(/\s+/g, '');
  if (/^(0x)?[0-9a-fA-F]+$/.test(text)) {
    const digits = text.startsWith('0x') ? text.slice(2) : text;
    if (digits.length % 2 !== 0) throw new ConfigError(`INPUT ${argument}: hex text with an odd number of digits (${digits.length})`);
    return hexToBytes(`0x${digits}`);
  }
  return new Uint8Array(raw.buffer, raw.byteOffset, raw.length);
}

/** The chain a span batch's blocks are rebuilt with: --rollup-config, overridden by the --l2-* flags. */
function chainOf(config: Config): SpanBatchChain | undefined {
  let fromFile: { l2_chain_id?: number; block_time?: number; genesis?: { l2_time?: number } } = {};
  if (config.rollupConfig) {
    try {
      fromFile = JSON.parse(readFileSync(config.rollupConfig, 'utf8')) as typeof fromFile;
    } catch (error) {
      throw new ConfigError(`--rollup-config (FLASHLOG_ROLLUP_CONFIG): ${errorMessage(error)}`);
    }
  }
  const chainId = config.l2ChainId ?? fromFile.l2_chain_id;
  if (chainId === undefined) return undefined;
  return {
    chainId: BigInt(chainId),
    l2GenesisTime: BigInt(config.l2GenesisTime ?? fromFile.genesis?.l2_time ?? 0),
    blockTime: BigInt(config.l2BlockTime ?? fromFile.block_time ?? 2),
  };
}

/**
 * `flashlog decode-batch INPUT...`: what the batcher posted, as JSON: each input's frames, the
 * channels they complete (through the channel bank of --batch-fork), and each channel's batches, as
 * op-node's batch decoder shows them. Span batches become blocks with their transactions rebuilt
 * when the chain id is known (--l2-chain-id or --rollup-config). Exit 0 when everything decoded,
 * 1 when an input, channel or batch did not (the JSON says which and where).
 */
export const decodeBatchCommand: Command = {
  name: 'decode-batch',
  summary: 'print the frames, channels and batches of batcher transactions, batcher data, blobs or channels as JSON',
  usage:
    'flashlog decode-batch INPUT... [--batch-input auto|transaction|calldata|blob|channel] [--batch-fork F] [--l2-chain-id N] [--l2-genesis-time S] [--l2-block-time S] [--rollup-config FILE]   (INPUT: a file of raw bytes or hex, 0x-hex, or - for stdin)',
  settings: ['logLevel', 'batchInput', 'batchFork', 'l2ChainId', 'l2GenesisTime', 'l2BlockTime', 'rollupConfig'],
  longRunning: false,
  async run(ctx, positionals) {
    if (positionals.length === 0) throw new ConfigError('INPUT: expected at least one batcher transaction, batcher data, blob or channel');
    const inputs: BatcherInput[] = positionals.map((argument) => {
      const bytes = bytesOf(argument);
      const kind = ctx.config.batchInput === 'auto' ? (bytes.length === blobSizeBytes ? 'blob' : 'transaction') : ctx.config.batchInput;
      return { kind, bytes, label: argument.startsWith('0x') && argument.length > 18 ? `${argument.slice(0, 18)}…` : argument };
    });
    const report = await decodeBatcherData(inputs, derivationRules(ctx.config.batchFork), chainOf(ctx.config));
    const json = batcherReportJson(report);
    // Wait for the pipe to take it all: the CLI exits right after `run`.
    await new Promise<void>((resolve, reject) =>
      process.stdout.write(`${JSON.stringify(json, null, 2)}\n`, (error) => (error ? reject(error) : resolve())),
    );
    const failed =
      report.inputs.some((input) => input.error) ||
      report.channels.some(
        (channel) =>
          channel.error ||
          (channel.read && channel.read.end.reason !== 'end') ||
          channel.read?.batches.some((b) => b.type === 'span' && b.dropped),
      );
    return failed ? 1 : 0;
  },
};
