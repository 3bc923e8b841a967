// Adds lock entries for EDR's other-platform binaries, which this registry mirror does not serve
// (npm leaves them out of the lock, and `npm ci` then refuses the lock as out of sync).
const fs = require('fs');
const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
const edr = lock.packages['node_modules/@nomicfoundation/edr'];
const platforms = {
  'darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'linux-arm64-musl': { os: ['linux'], cpu: ['arm64'], libc: ['musl'] },
  'win32-x64-msvc': { os: ['win32'], cpu: ['x64'] },
};
let added = 0;
for (const [suffix, platform] of Object.entries(platforms)) {
  const key = `node_modules/@nomicfoundation/edr-${suffix}`;
  if (lock.packages[key]) continue;
  lock.packages[key] = { version: edr.version, ...platform, license: 'MIT', optional: true, engines: { node: '>= 22' } };
  added++;
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
fs.writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n');
console.log(`added ${added} lock entries`);
