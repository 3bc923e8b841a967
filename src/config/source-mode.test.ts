import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { networks } from './networks.ts';
import { parseConfig } from './settings.ts';
import { sourceModeOf, viewBlocksAreCanonical } from './source-mode.ts';

const feed = 'ws://127.0.0.1:7111';
const node = 'http://127.0.0.1:8545';

/** The settings as a command parses them, from flags and FLASHLOG_* variables. */
const parsed = (argv: string[], env: Record<string, string> = {}) =>
  parseConfig(argv, env, ['source', 'network', 'ws', 'rpc', 'rpcWs', 'devnet', 'denim']).config;

describe('sourceModeOf', () => {
  it('with only a node (--rpc): the blocks source, read from that node', () => {
    const mode = sourceModeOf(parsed(['--rpc', node]));
    expect(mode).toMatchObject({ source: 'blocks', feedUrls: [], rpcUrl: node });
  });

  it('with a feed (--ws): flashblocks, its feeds', () => {
    expect(sourceModeOf(parsed(['--ws', feed, '--rpc', node]))).toMatchObject({ source: 'flashblocks', feedUrls: [feed], rpcUrl: node });
  });

  it('--source wins over --ws; the feed is not read on the blocks source', () => {
    expect(sourceModeOf(parsed(['--source', 'blocks', '--ws', feed, '--rpc', node]))).toMatchObject({ source: 'blocks', feedUrls: [] });
    expect(sourceModeOf(parsed(['--source', 'flashblocks', '--rpc', node]))).toMatchObject({ source: 'flashblocks', feedUrls: [] });
  });

  it('a variable decides as its flag does', () => {
    expect(sourceModeOf(parsed([], { FLASHLOG_WS: feed, FLASHLOG_RPC: node })).source).toBe('flashblocks');
    expect(sourceModeOf(parsed([], { FLASHLOG_RPC: node })).source).toBe('blocks');
    expect(sourceModeOf(parsed([], { FLASHLOG_SOURCE: 'blocks', FLASHLOG_WS: feed })).source).toBe('blocks');
  });

  it('a --network preset gives its source and endpoints; --rpc and --ws override the URLs', () => {
    for (const [name, preset] of Object.entries(networks)) {
      const mode = sourceModeOf(parsed(['--network', name]));
      expect(mode.source, name).toBe(preset.source);
      expect(mode.rpcUrl, name).toBe(preset.rpc);
      expect(mode.feedUrls, name).toEqual(preset.source === 'flashblocks' && 'ws' in preset ? [preset.ws] : []);
    }
    expect(sourceModeOf(parsed(['--network', 'base-mainnet', '--rpc', node])).rpcUrl).toBe(node);
    expect(sourceModeOf(parsed(['--network', 'unichain-sepolia', '--ws', feed])).feedUrls).toEqual([feed]);
    // The preset decides over the feed's presence: Base is blocks even with a --ws given.
    expect(sourceModeOf(parsed(['--network', 'base-sepolia', '--ws', feed])).source).toBe('blocks');
  });

  it('--devnet: the devnet decides (--denim: blocks), with no URLs until it starts', () => {
    expect(sourceModeOf(parsed(['--devnet']))).toMatchObject({ source: 'flashblocks', feedUrls: [], rpcUrl: undefined });
    expect(sourceModeOf(parsed(['--devnet', '--denim']))).toMatchObject({ source: 'blocks', feedUrls: [], rpcUrl: undefined });
    expect(sourceModeOf(parsed(['--devnet', '--denim', '--source', 'blocks'])).source).toBe('blocks');
  });

  it('refuses contradictions with a message naming the settings', () => {
    expect(() => sourceModeOf(parsed(['--devnet', '--denim', '--source', 'flashblocks']))).toThrow(ConfigError);
    expect(() => sourceModeOf(parsed(['--devnet', '--denim', '--source', 'flashblocks']))).toThrow(
      /--source.*"flashblocks".*--devnet --denim/,
    );
    expect(() => sourceModeOf(parsed(['--devnet', '--source', 'blocks']))).toThrow(/expected "flashblocks"/);
    expect(() => sourceModeOf(parsed(['--devnet', '--network', 'base-sepolia']))).toThrow(/--devnet and --network/);
    expect(() => sourceModeOf(parsed(['--denim', '--rpc', node]))).toThrow(/--denim: got it without --devnet/);
  });

  it('one fact: every view block is canonical exactly on the blocks source', () => {
    expect(viewBlocksAreCanonical(sourceModeOf(parsed(['--devnet', '--denim'])).source)).toBe(true);
    expect(viewBlocksAreCanonical(sourceModeOf(parsed(['--source', 'blocks', '--rpc', node])).source)).toBe(true);
    expect(viewBlocksAreCanonical(sourceModeOf(parsed(['--network', 'base-mainnet'])).source)).toBe(true);
    expect(viewBlocksAreCanonical(sourceModeOf(parsed(['--devnet'])).source)).toBe(false);
    expect(viewBlocksAreCanonical(sourceModeOf(parsed(['--ws', feed, '--rpc', node])).source)).toBe(false);
  });
});

describe('the OP presets', () => {
  it("op-mainnet and op-sepolia: a subblocks (flashblocks-form) source with OP's public RPC; no feed named, so --ws is required, with a one-line hint", () => {
    for (const [network, rpc] of [
      ['op-mainnet', 'https://mainnet.optimism.io'],
      ['op-sepolia', 'https://sepolia.optimism.io'],
    ] as const) {
      const mode = sourceModeOf(parsed(['--network', network]));
      expect(mode).toMatchObject({ source: 'flashblocks', feedUrls: [], rpcUrl: rpc });
      expect(mode.missingFeed).toMatch(new RegExp(`^--network ${network}: .*--ws \\(FLASHLOG_WS\\)`));
      expect(mode.missingFeed).not.toContain('\n');
      const given = sourceModeOf(parsed(['--network', network, '--ws', feed]));
      expect(given.feedUrls).toEqual([feed]);
      expect(given.missingFeed).toBeUndefined();
    }
    // A preset that names its feed never asks for one.
    expect(sourceModeOf(parsed(['--network', 'xlayer'])).missingFeed).toBeUndefined();
  });
});
