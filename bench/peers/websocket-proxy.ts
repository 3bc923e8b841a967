import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds Base's websocket-proxy (base/base, `bin/websocket-proxy` over `crates/infra/websocket-proxy`)
 * for the fan-out bench, into bench/.cache/ (gitignored). The source is a git directory of base/base
 * (FLASHLOG_BENCH_BASE_GIT, default /work/.mirror/base+base/repo). The base/base workspace pulls reth
 * from GitHub, which a build without GitHub cannot fetch, and the proxy needs none of it: the bench
 * builds the proxy's library crate and its binary as one standalone package, each dependency at the
 * version the workspace declares (and the workspace's Cargo.lock), with the binary's `base-cli-utils`
 * log flags (reth-based) replaced by a plain tracing subscriber. Nothing else of main.rs changes.
 * Returns the binary's path, or why it can't (the bench then skips the peer with that line).
 */
const cacheDir = fileURLToPath(new URL('../.cache/websocket-proxy/', import.meta.url));

export function buildWebsocketProxy(log: (line: string) => void): { binary: string; commit: string } | { skipped: string } {
  const gitDir = process.env.FLASHLOG_BENCH_BASE_GIT ?? '/work/.mirror/base+base/repo';
  if (!existsSync(gitDir))
    return { skipped: `base/base source not found at ${gitDir} (set FLASHLOG_BENCH_BASE_GIT to a git dir of github.com/base/base)` };
  if (spawnSync('cargo', ['--version']).status !== 0) return { skipped: 'cargo not found on PATH' };
  const git = (...args: string[]) => execFileSync('git', ['--git-dir', gitDir, ...args], { maxBuffer: 64 << 20 });
  const commit = git('rev-parse', 'HEAD').toString().trim();
  const binary = join(cacheDir, 'target', 'release', 'websocket-proxy');
  const stamp = join(cacheDir, 'built-from');
  if (existsSync(binary) && existsSync(stamp) && readFileSync(stamp, 'utf8') === commit) return { binary, commit };
  const src = join(cacheDir, 'src');
  rmSync(src, { recursive: true, force: true });
  mkdirSync(join(src, 'bin'), { recursive: true });
  const show = (path: string) => git('show', `${commit}:${path}`).toString();
  const rootToml = show('Cargo.toml');
  for (const path of git('ls-tree', '-r', '--name-only', commit, 'crates/infra/websocket-proxy').toString().trim().split('\n')) {
    if (path.endsWith('/Cargo.toml')) continue;
    const target = join(src, path.slice('crates/infra/websocket-proxy/'.length));
    mkdirSync(join(target, '..'), { recursive: true });
    writeFileSync(target, show(path));
  }
  let main = show('bin/websocket-proxy/src/main.rs');
  const edits: [string, string][] = [
    ['use base_cli_utils::LogConfig;\n', ''],
    ['base_cli_utils::define_log_args!("WEBSOCKET_PROXY");\n', ''],
    ['    #[command(flatten)]\n    log: LogArgs,\n', ''],
    [
      '    LogConfig::from(args.log).init_tracing_subscriber().expect("failed to initialize tracing");\n',
      '    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).init();\n',
    ],
  ];
  for (const [from, to] of edits) {
    if (!main.includes(from))
      return {
        skipped: `websocket-proxy main.rs at ${commit.slice(0, 10)} no longer has \`${from.trim()}\`; update bench/peers/websocket-proxy.ts`,
      };
    main = main.replace(from, to);
  }
  writeFileSync(join(src, 'bin', 'main.rs'), main);
  const deps = new Map<string, { features: Set<string> }>();
  for (const manifest of ['crates/infra/websocket-proxy/Cargo.toml', 'bin/websocket-proxy/Cargo.toml']) {
    const section =
      show(manifest)
        .split(/^\[dependencies\]$/m)[1]
        ?.split(/^\[/m)[0] ?? '';
    for (const line of section.split('\n')) {
      const match = /^([\w-]+)(?:\.workspace\s*=\s*true|\s*=\s*\{\s*workspace\s*=\s*true(?:,\s*features\s*=\s*\[([^\]]*)\])?[^}]*\})/.exec(
        line.trim(),
      );
      if (!match || match[1] === 'base-cli-utils' || match[1] === 'websocket-proxy') continue;
      const entry = deps.get(match[1]!) ?? { features: new Set<string>() };
      for (const feature of (match[2] ?? '')
        .split(',')
        .map((f) => f.trim().replace(/"/g, ''))
        .filter(Boolean))
        entry.features.add(feature);
      deps.set(match[1]!, entry);
    }
  }
  deps.set('tracing-subscriber', { features: new Set(['fmt', 'env-filter']) });
  const lines: string[] = [];
  for (const [name, { features }] of deps) {
    const root = new RegExp(`^${name}\\s*=\\s*(.+)$`, 'm').exec(rootToml.split(/^\[workspace\.dependencies\]$/m)[1] ?? '')?.[1];
    if (!root) return { skipped: `the base/base workspace declares no version for ${name}` };
    const version = /^"([^"]+)"/.exec(root)?.[1] ?? /version\s*=\s*"([^"]+)"/.exec(root)?.[1];
    if (!version) return { skipped: `cannot read the workspace version of ${name}: ${root}` };
    const noDefault = /default-features\s*=\s*false/.test(root);
    for (const feature of /features\s*=\s*\[([^\]]*)\]/
      .exec(root)?.[1]
      ?.split(',')
      .map((f) => f.trim().replace(/"/g, ''))
      .filter(Boolean) ?? [])
      features.add(feature);
    lines.push(
      `${name} = { version = "${version}"${noDefault ? ', default-features = false' : ''}, features = [${[...features].map((f) => `"${f}"`).join(', ')}] }`,
    );
  }
  writeFileSync(
    join(src, 'Cargo.toml'),
    [
      '[package]',
      'name = "websocket-proxy"',
      'version = "0.0.0"',
      'edition = "2024"',
      '',
      '[lib]',
      'name = "websocket_proxy"',
      'path = "src/lib.rs"',
      '',
      '[[bin]]',
      'name = "websocket-proxy"',
      'path = "bin/main.rs"',
      '',
      '[dependencies]',
      ...lines,
      '',
      '[profile.release]',
      'opt-level = 3',
      'lto = "thin"',
      'codegen-units = 16',
      '',
    ].join('\n'),
  );
  writeFileSync(join(src, 'Cargo.lock'), show('Cargo.lock'));
  log(`building Base's websocket-proxy (base/base ${commit.slice(0, 10)}) with cargo into ${cacheDir} (first run only; a few minutes)`);
  const build = spawnSync(
    'cargo',
    ['build', '--release', '--manifest-path', join(src, 'Cargo.toml'), '--target-dir', join(cacheDir, 'target')],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (build.status !== 0 || !existsSync(binary)) return { skipped: `cargo build of websocket-proxy failed (exit ${build.status})` };
  writeFileSync(stamp, commit);
  return { binary, commit };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(buildWebsocketProxy((line) => console.error(line)));
}
