// node-rdkafka, the librdkafka binding for Node, built on demand. Its install script would compile
// the librdkafka it bundles (pnpm does not run it: see pnpm-workspace.yaml); instead it is built
// here with BUILD_LIBRDKAFKA=0 against Debian's librdkafka-dev, for the Node the clients run under
// (node-rdkafka is a NAN addon: its binary is tied to one Node ABI), with that Node's own headers
// (the npm `node` package ships them), so nothing is downloaded. About 10 s on 2 cores, once: a
// marker file records which Node the binary was built for.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ClientNode } from './node-runtime.js';

const require = createRequire(import.meta.url);

export interface RdkafkaBuild {
  ok: boolean;
  /** Why not, with what to do about it. */
  reason?: string;
  version?: string;
  built?: boolean;
}

/** The folder of Node's headers for this binary, if it has them. */
function nodeHeaders(nodePath: string): string | undefined {
  const bin = dirname(nodePath);
  const candidates = [join(bin, '..'), join(bin, '..', 'node_modules', `node-${process.platform}-${process.arch}`), '/usr'];
  return candidates.find((d) => existsSync(join(d, 'include', 'node', 'node_version.h')));
}

/** node-gyp as npm bundles it, else from the registry through npx. */
function nodeGyp(): string[] {
  const root = spawnSync('npm', ['root', '-g'], { encoding: 'utf8' }).stdout?.trim();
  const bundled = root ? join(root, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js') : '';
  return bundled && existsSync(bundled) ? [bundled] : [];
}

/** null when the addon loads under that Node, else the first line that says why not. */
function loadsUnder(nodePath: string, binary: string): string | null {
  const r = spawnSync(nodePath, ['-e', `require(${JSON.stringify(binary)})`], { encoding: 'utf8', timeout: 60_000 });
  if (r.status === 0) return null;
  const why = (r.stderr ?? '').split('\n').find((l) => /NODE_MODULE_VERSION|cannot open|Error:/.test(l));
  return (why ?? r.error?.message ?? `exit ${r.status}`).trim();
}

export function ensureRdkafka(node: ClientNode, log: (line: string) => void): RdkafkaBuild {
  let dir: string;
  try {
    dir = dirname(require.resolve('node-rdkafka/package.json'));
  } catch {
    return { ok: false, reason: 'node-rdkafka is not installed (pnpm install)' };
  }
  const version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  const marker = join(dir, 'build', 'kwire-built-for-node');
  const binary = join(dir, 'build', 'Release', 'node-librdkafka.node');
  // The marker alone is not trusted: a binary left by an earlier build must also load.
  if (existsSync(binary) && existsSync(marker) && readFileSync(marker, 'utf8').trim() === node.version && loadsUnder(node.path, binary) === null) {
    return { ok: true, version, built: false };
  }
  if (!existsSync('/usr/include/librdkafka/rdkafka.h')) {
    return { ok: false, version, reason: "Debian's librdkafka-dev is not installed: `apt-get install -y librdkafka-dev`, then run again (node-rdkafka is built against it)" };
  }
  const headers = nodeHeaders(node.path);
  if (!headers) return { ok: false, version, reason: `no headers for Node ${node.version} next to ${node.path}: node-gyp would download them` };
  const gyp = nodeGyp();
  if (!gyp.length) return { ok: false, version, reason: 'node-gyp not found in npm\'s global folder' };
  log(`building node-rdkafka ${version} against Debian's librdkafka for Node ${node.version} (once)`);
  // node-gyp lets npm_config_* variables override its command line, and npm exports the npmrc's
  // nodedir (here /usr, Node 20's headers) to every script it runs: under `npm test` the binary
  // was built for the wrong ABI and failed to load under Node 24. The variable says the same.
  const r = spawnSync(node.path, [...gyp, 'rebuild', `--nodedir=${headers}`, '-j', '2'], {
    cwd: dir,
    env: { ...process.env, BUILD_LIBRDKAFKA: '0', npm_config_nodedir: headers },
    encoding: 'utf8',
    timeout: 600_000,
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0 || !existsSync(binary)) {
    const tail = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-3).join(' | ');
    return { ok: false, version, reason: `node-gyp rebuild failed (${r.error?.message ?? `exit ${r.status}`}): ${tail}` };
  }
  const loads = loadsUnder(node.path, binary);
  if (loads !== null) return { ok: false, version, reason: `the node-rdkafka just built does not load under Node ${node.version}: ${loads}` };
  writeFileSync(marker, `${node.version}\n`);
  return { ok: true, version, built: true };
}
