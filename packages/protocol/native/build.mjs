// Builds the two addons, CRC-32C (native/crc32c.c) and LZ4 block decoding (native/lz4.c), with
// node-gyp; run by `install`. Optional by design: without a C compiler, Node's headers or node-gyp,
// kwire falls back to @node-rs/crc32 (prebuilt) and to its JavaScript LZ4 decoder, and this script
// says so and exits 0, so an install never fails because of it.
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
  say('KWIRE_SKIP_NATIVE is set: addons not built (@node-rs/crc32 and the JavaScript LZ4 decoder will be used)');
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
  say('no Node headers found next to this Node: addons not built (@node-rs/crc32 and the JavaScript LZ4 decoder will be used)');
  process.exit(0);
}
if (!gyp) {
  say('node-gyp not found: addons not built (@node-rs/crc32 and the JavaScript LZ4 decoder will be used)');
  process.exit(0);
}
// node-gyp lets an npm_config_nodedir variable (npm exports the npmrc's) override --nodedir.
const env = { ...process.env, npm_config_nodedir: nodedir };
const r = spawnSync(process.execPath, [gyp, 'rebuild', `--nodedir=${nodedir}`], { cwd: root, env, encoding: 'utf8', timeout: 120_000 });
if (r.status !== 0) {
  say(`the addons did not build (@node-rs/crc32 and the JavaScript LZ4 decoder will be used):\n${(r.stderr || r.stdout || String(r.error)).split('\n').slice(-15).join('\n')}`);
  rmSync(join(root, 'build'), { recursive: true, force: true });
  process.exit(0);
}
say('addons built (build/Release/kwire_crc32c.node, kwire_lz4.node)');
