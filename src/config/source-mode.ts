import { ConfigError } from '../errors.ts';
import { networks, type NetworkName, type NetworkPreset } from './networks.ts';

/**
 * Where pre-confirmations come from, decided once for every command (`run`, `ingest`, `serve`):
 *
 * - `flashblocks`: a flashblocks feed; the view's newest block is being built, and a block leaves
 *   `pending` once the upstream's head reaches it.
 * - `blocks`: a node's complete unsafe blocks (Base since Denim); every block the view holds is a
 *   canonical block, so the upstream's head never drops one, and `newHeads`/`logs` come from the
 *   view.
 *
 * `--denim` (with `--devnet`), `--source blocks` and a Base `--network` preset all say `blocks`:
 * the flags users type go through {@link sourceModeOf} once, and the value travels under one name,
 * `source: SourceKind`, everywhere (the Source port's `kind`, src/source/create.ts, `serve`, the
 * gateway and its subscription hub). What follows from it (whether the gateway follows the
 * upstream's head, where `newHeads` and `logs` are read) is derived by {@link viewBlocksAreCanonical}.
 */
export type SourceKind = 'flashblocks' | 'blocks';

/** The settings the decision reads (a command's parsed config satisfies it). */
export interface SourceSettings {
  readonly source?: SourceKind | undefined;
  readonly network?: NetworkName | undefined;
  readonly ws?: readonly string[] | undefined;
  readonly rpc?: string | undefined;
  readonly rpcWs?: string | undefined;
  readonly devnet?: boolean | undefined;
  readonly denim?: boolean | undefined;
}

export interface SourceMode {
  readonly source: SourceKind;
  /** Flashblocks feeds (`--ws`, else the preset's); empty on the blocks source. */
  readonly feedUrls: readonly string[];
  /** The upstream JSON-RPC (`--rpc`, else the preset's); unset with `--devnet` (known once it starts). */
  readonly rpcUrl: string | undefined;
  /** The node's WebSocket JSON-RPC for the blocks source (`--rpc-ws`, else the preset's). */
  readonly rpcWsUrl: string | undefined;
  /** Which setting decided `source`, for messages. */
  readonly decidedBy: string;
  /**
   * A flashblocks `--network` preset with no public feed (OP Mainnet, OP Sepolia) and no --ws given:
   * the one-line message saying how to point --ws at one. Commands that read the feed refuse with it.
   */
  readonly missingFeed?: string;
}

/**
 * The source mode of a set of settings. The rule, in order:
 * 1. `--devnet`: the devnet's own (`--denim`: blocks; else flashblocks);
 * 2. `--source`;
 * 3. the `--network` preset's;
 * 4. flashblocks when a feed is given (`--ws`), blocks otherwise.
 *
 * Pure: the same settings give the same mode in every command, so `ingest` and a separate `serve`
 * given the same settings (flags or `FLASHLOG_*` variables) agree.
 *
 * @example sourceModeOf({ rpc: 'http://node:8545' }).source // 'blocks'
 * @example sourceModeOf({ ws: ['ws://feed:7111'], rpc: 'http://node:8545' }).source // 'flashblocks'
 */
export function sourceModeOf(settings: SourceSettings): SourceMode {
  if (settings.devnet && settings.network !== undefined) throw new ConfigError('--devnet and --network: got both, expected one of them');
  if (settings.denim && !settings.devnet)
    throw new ConfigError('--denim: got it without --devnet, expected --devnet --denim (a Denim chain of your own is --source blocks)');
  const preset: NetworkPreset | undefined = settings.network ? networks[settings.network] : undefined;
  let source: SourceKind;
  let decidedBy: string;
  if (settings.devnet) {
    source = settings.denim ? 'blocks' : 'flashblocks';
    decidedBy = settings.denim ? '--devnet --denim' : '--devnet';
    if (settings.source !== undefined && settings.source !== source)
      throw new ConfigError(`--source (FLASHLOG_SOURCE): got "${settings.source}" with ${decidedBy}, expected "${source}" or nothing`);
  } else if (settings.source !== undefined) {
    source = settings.source;
    decidedBy = '--source';
  } else if (preset) {
    source = preset.source;
    decidedBy = `--network ${settings.network}`;
  } else {
    source = settings.ws && settings.ws.length > 0 ? 'flashblocks' : 'blocks';
    decidedBy = source === 'flashblocks' ? '--ws' : 'no --ws';
  }
  const presetWs = preset?.ws ? [preset.ws] : [];
  const feedUrls = source === 'flashblocks' && !settings.devnet ? (settings.ws && settings.ws.length > 0 ? settings.ws : presetWs) : [];
  return {
    source,
    feedUrls,
    rpcUrl: settings.devnet ? undefined : (settings.rpc ?? preset?.rpc),
    rpcWsUrl: settings.devnet ? undefined : (settings.rpcWs ?? preset?.rpcWs),
    decidedBy,
    ...(source === 'flashblocks' && feedUrls.length === 0 && preset?.feedHint ? { missingFeed: preset.feedHint } : {}),
  };
}

/**
 * It is an invariant that on the blocks source every block the view holds is canonical: the
 * gateway does not drop one when the upstream's head reaches it, and reads `newHeads`/`logs` from
 * the view; on a flashblocks source it follows the upstream's head and reads them upstream.
 */
export const viewBlocksAreCanonical = (source: SourceKind): boolean => source === 'blocks';

/**
 * Settings besides `--rpc` that decide the source: every command that decides it (`run`,
 * `ingest`, `serve`) accepts them, so the same settings give the same mode.
 */
export const sourceModeSettings = ['source', 'network', 'ws'] as const;
