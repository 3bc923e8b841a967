import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';

/**
 * Base's websocket-proxy (base/base, `bin/websocket-proxy`) as a peer of the fan-out bench. The
 * bench builds no other project's source: the user builds or downloads the proxy and gives its
 * binary's path in FLASHLOG_BENCH_WEBSOCKET_PROXY. Without it the bench skips the peer with one
 * line. The version the binary reports (`--version`, when it answers) labels the bench's rows.
 */
export function websocketProxyBinary(): { binary: string; version: string } | { skipped: string } {
  const binary = process.env.FLASHLOG_BENCH_WEBSOCKET_PROXY;
  if (!binary) return { skipped: "set FLASHLOG_BENCH_WEBSOCKET_PROXY to the path of Base's websocket-proxy binary to measure it" };
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    return { skipped: `FLASHLOG_BENCH_WEBSOCKET_PROXY=${binary} is not an executable file` };
  }
  const probe = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 5_000 });
  const version = probe.status === 0 ? probe.stdout.trim().split('\n')[0]! : 'version unknown';
  return { binary, version };
}
