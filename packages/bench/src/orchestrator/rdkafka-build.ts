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
  if (existsSync(binary) && existsSync(marker) && readFileSync(marker, 'utf8').trim() === node.version) return { ok: true, version, built: false };
  if (!existsSync('/usr/include/librdkafka/rdkafka.h')) {
    return { ok: false, version, reason: "Debian's librdkafka-dev is not installed: `apt-get install -y librdkafka-dev`, then run again (node-rdkafka is built against it)" };
  }
  const headers = nodeHeaders(node.path);
  if (!headers) return { ok: false, version, reason: `no headers for Node ${node.version} next to ${node.path}: node-gyp would download them` };
  const gyp = nodeGyp();
  if (!gyp.length) return { ok: false, version, reason: 'node-gyp not found in npm\'s global folder' };
  log(`building node-rdkafka ${version} against Debian's librdkafka for Node ${node.version} (once)`);
  const r = spawnSync(node.path, [...gyp, 'rebuild', `--nodedir=${headers}`, '-j', '2'], {
    cwd: dir,
    env: { ...process.env, BUILD_LIBRDKAFKA: '0' },
    encoding: 'utf8',
    timeout: 600_000,
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0 || !existsSync(binary)) {
    const tail = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-3).join(' | ');
    return { ok: false, version, reason: `node-gyp rebuild failed (${r.error?.message ?? `exit ${r.status}`}): ${tail}` };
  }
  writeFileSync(marker, `${node.version}\n`);
  return { ok: true, version, built: true };
}
