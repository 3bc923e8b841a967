#!/usr/bin/env node
// The flashlog CLI. Node >= 22.18 runs the TypeScript sources directly (type stripping).
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(`flashlog needs Node >= 22.18 (24 recommended); this is ${process.version}\n`);
  process.exit(2);
}
const { main } = await import('../streams/main.ts');
await main(process.argv.slice(2), process.env);
