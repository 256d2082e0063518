// Builds the CRC-32C addon (native/crc32c.c) with node-gyp; run by `install`. Optional by design:
// without a C compiler, Node's headers or node-gyp, kwire falls back to @node-rs/crc32 (prebuilt)
// and this script says so and exits 0, so an install never fails because of it.
//
// Headers: node-gyp would download them from nodejs.org; they are looked for next to the running
// Node first (tarball installs, Debian's /usr/include/node), because the addon uses Node-API only
// and one build serves every Node version >= 20.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const say = (msg) => process.stderr.write(`@kwire/protocol: ${msg}\n`);

if (process.env.KWIRE_SKIP_NATIVE) {
  say('KWIRE_SKIP_NATIVE is set: CRC-32C addon not built (@node-rs/crc32 will be used)');
  process.exit(0);
}

const prefix = dirname(dirname(process.execPath));
const nodedir = [prefix, '/usr', '/usr/local'].find((d) => existsSync(join(d, 'include', 'node', 'node_api.h')));

const gypCandidates = [
  process.env.npm_config_node_gyp, // npm and pnpm name the node-gyp they bundle for install scripts
  join(prefix, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  '/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js',
  '/usr/share/nodejs/node-gyp/bin/node-gyp.js',
];
const gyp = gypCandidates.find((p) => p && existsSync(p));

if (!nodedir) {
  say('no Node headers found next to this Node: CRC-32C addon not built (@node-rs/crc32 will be used)');
  process.exit(0);
}
if (!gyp) {
  say('node-gyp not found: CRC-32C addon not built (@node-rs/crc32 will be used)');
  process.exit(0);
}
const r = spawnSync(process.execPath, [gyp, 'rebuild', `--nodedir=${nodedir}`], { cwd: root, encoding: 'utf8', timeout: 120_000 });
if (r.status !== 0) {
  say(`the CRC-32C addon did not build (@node-rs/crc32 will be used):\n${(r.stderr || r.stdout || String(r.error)).split('\n').slice(-15).join('\n')}`);
  rmSync(join(root, 'build'), { recursive: true, force: true });
  process.exit(0);
}
say('CRC-32C addon built (build/Release/kwire_crc32c.node)');
