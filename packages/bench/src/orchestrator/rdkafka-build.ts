// node-rdkafka, the librdkafka binding for Node, on the librdkafka it bundles (2.12 for
// node-rdkafka 3.6.1), built once and cached in the git-ignored .cache like the Kafka jars.
//
// pnpm does not run node-rdkafka's install script (ignoredBuiltDependencies in
// pnpm-workspace.yaml): the bench copies the package and its two dependencies (nan, bindings)
// into .cache/node-rdkafka/<version>-node<node version>/node_modules and runs node-gyp there, for
// the Node the clients run under (a NAN addon is tied to one Node ABI), with that Node's own
// headers (the npm `node` package ships them). librdkafka's own configure and make build it from
// the sources in the npm package: nothing is downloaded. About 2.5 minutes on 2 cores, once.
//
// What librdkafka's configure looks for on the machine, all optional: zlib and OpenSSL (Debian's
// zlib1g-dev, libssl-dev), libzstd (libzstd-dev), SASL, curl. Without zstd it builds a librdkafka
// that cannot read zstd batches, so the bench installs Debian's libzstd-dev first when it can
// (root with apt-get), and otherwise builds without it and skips node-rdkafka on zstd topics,
// saying how to install it.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { cacheDir } from '@kwire/broker';
import type { ClientNode } from './node-runtime.js';

const require = createRequire(import.meta.url);

export interface RdkafkaBuild {
  ok: boolean;
  /** Why not, with what to do about it. */
  reason?: string;
  version?: string;
  built?: boolean;
  /** The package folder to require(). */
  dir?: string;
  librdkafka?: string;
  /** librdkafka's builtin.features (gzip, snappy, lz4, zstd, ssl...). */
  features?: string[];
  /** Set when zstd is missing: why, and the command that fixes it. */
  noZstd?: string;
}

interface Marker {
  node: string;
  librdkafka: string;
  features: string[];
}

/** The folder of Node's headers for this binary, if it has them. */
function nodeHeaders(nodePath: string): string | undefined {
  const bin = dirname(nodePath);
  const candidates = [join(bin, '..'), join(bin, '..', 'node_modules', `node-${process.platform}-${process.arch}`), '/usr'];
  return candidates.find((d) => existsSync(join(d, 'include', 'node', 'node_version.h')));
}

/** node-gyp as npm bundles it. */
function nodeGyp(): string[] {
  const root = spawnSync('npm', ['root', '-g'], { encoding: 'utf8' }).stdout?.trim();
  const bundled = root ? join(root, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js') : '';
  return bundled && existsSync(bundled) ? [bundled] : [];
}

/** The loaded build's librdkafka version and features, or the first line that says why it does not load. */
function probe(nodePath: string, dir: string): { librdkafka: string; features: string[] } | string {
  const r = spawnSync(nodePath, ['-e', `const K = require(${JSON.stringify(dir)}); console.log(JSON.stringify({ librdkafka: K.librdkafkaVersion, features: K.features }))`], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status === 0) {
    try {
      return JSON.parse(r.stdout.trim().split('\n').pop()!) as { librdkafka: string; features: string[] };
    } catch {
      // fall through
    }
  }
  const why = (r.stderr ?? '').split('\n').find((l) => /NODE_MODULE_VERSION|cannot open|Error:/.test(l));
  return (why ?? r.error?.message ?? `exit ${r.status}`).trim();
}

const ZSTD_HEADER = '/usr/include/zstd.h';
const ZSTD_FIX = 'apt-get install -y libzstd-dev, then delete .cache/node-rdkafka and run again';

/** Installs Debian's libzstd-dev when this process may (root, apt-get present); the outcome in words. */
function installZstd(log: (line: string) => void): string | null {
  if (existsSync(ZSTD_HEADER)) return null;
  if (process.getuid?.() !== 0 || spawnSync('apt-get', ['--version']).status !== 0) return `libzstd-dev is not installed and the bench cannot install it (not root, or no apt-get): ${ZSTD_FIX}`;
  log("installing Debian's libzstd-dev (librdkafka reads zstd batches with it): apt-get install -y libzstd-dev");
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'libzstd-dev'], { env, encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) {
    // A fresh machine may have no package lists yet.
    spawnSync('apt-get', ['update'], { env, encoding: 'utf8', timeout: 300_000 });
    r = spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'libzstd-dev'], { env, encoding: 'utf8', timeout: 300_000 });
  }
  if (existsSync(ZSTD_HEADER)) return null;
  return `apt-get install -y libzstd-dev failed (${(r.stderr ?? '').trim().split('\n').pop() ?? `exit ${r.status}`}): ${ZSTD_FIX}`;
}

/**
 * `build: false` (--quick, inside npm test): use a build that is already there, never start one:
 * the build takes minutes on two cores, the full run (`npm run bench`) makes it once.
 */
export function ensureRdkafka(node: ClientNode, log: (line: string) => void, options: { build?: boolean } = {}): RdkafkaBuild {
  let src: string;
  try {
    src = realpathSync(dirname(require.resolve('node-rdkafka/package.json')));
  } catch {
    return { ok: false, reason: 'node-rdkafka is not installed (pnpm install)' };
  }
  const version = (JSON.parse(readFileSync(join(src, 'package.json'), 'utf8')) as { version: string }).version.replace(/^v/, '');
  const home = join(cacheDir(), 'node-rdkafka', `${version}-node${node.version}`);
  const dir = join(home, 'node_modules', 'node-rdkafka');
  const markerFile = join(home, 'built.json');
  const result = (m: Marker, built: boolean): RdkafkaBuild => ({
    ok: true,
    version,
    built,
    dir,
    librdkafka: m.librdkafka,
    features: m.features,
    ...(m.features.includes('zstd') ? {} : { noZstd: `this librdkafka was built without zstd (libzstd-dev was missing): ${ZSTD_FIX}` }),
  });
  // The marker alone is not trusted: the build must also load.
  if (existsSync(markerFile)) {
    const m = JSON.parse(readFileSync(markerFile, 'utf8')) as Marker;
    if (m.node === node.version && typeof probe(node.path, dir) !== 'string') return result(m, false);
  }
  if (options.build === false) return { ok: false, version, reason: `not built yet for Node ${node.version}: \`npm run bench\` builds it once (a few minutes); --quick does not` };
  const zstd = installZstd(log);
  if (zstd) log(`WARNING: ${zstd}`);
  const headers = nodeHeaders(node.path);
  if (!headers) return { ok: false, version, reason: `no headers for Node ${node.version} next to ${node.path}: node-gyp would download them` };
  const gyp = nodeGyp();
  if (!gyp.length) return { ok: false, version, reason: "node-gyp not found in npm's global folder" };
  for (const tool of ['make', 'gcc', 'g++', 'python3']) {
    if (spawnSync(tool, ['--version']).status !== 0) return { ok: false, version, reason: `${tool} is not on the PATH: librdkafka is built from source (apt-get install -y build-essential python3)` };
  }
  // Staged, then renamed into place: an interrupted build leaves no folder that looks finished.
  const staging = `${home}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const modules = join(staging, 'node_modules');
  mkdirSync(modules, { recursive: true });
  const copy = (from: string, name: string) => cpSync(from, join(modules, name), { recursive: true, dereference: true });
  copy(src, 'node-rdkafka');
  for (const dep of ['nan', 'bindings']) {
    const depDir = realpathSync(dirname(createRequire(join(src, 'package.json')).resolve(`${dep}/package.json`)));
    copy(depDir, dep);
    // bindings needs file-uri-to-path.
    if (dep === 'bindings') copy(realpathSync(dirname(createRequire(join(depDir, 'package.json')).resolve('file-uri-to-path/package.json'))), 'file-uri-to-path');
  }
  const stagedDir = join(modules, 'node-rdkafka');
  log(`building node-rdkafka ${version} with the librdkafka it bundles, for Node ${node.version}, into ${home} (once, about 2.5 minutes on 2 cores)`);
  const started = Date.now();
  // node-gyp lets npm_config_* variables override its command line, and npm exports the npmrc's
  // nodedir to every script it runs: the variable says the same as --nodedir. The client Node's
  // folder goes first on the PATH, since node-gyp's actions call `node`.
  const env = { ...process.env, BUILD_LIBRDKAFKA: '1', npm_config_nodedir: headers, PATH: `${dirname(node.path)}:${process.env.PATH ?? ''}` };
  // librdkafka's configure runs first and alone: node-gyp's parallel make raced it once
  // ("No rule to make target config.h").
  const conf = spawnSync(node.path, ['util/configure.js'], { cwd: stagedDir, env, encoding: 'utf8', timeout: 600_000, maxBuffer: 64 << 20 });
  if (conf.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    return { ok: false, version, reason: `librdkafka's configure failed: ${`${conf.stdout}${conf.stderr}`.trim().split('\n').slice(-3).join(' | ')}` };
  }
  // node-rdkafka's binding.gyp builds librdkafka with a plain `make libs install` action, which
  // gets no jobserver from node-gyp's -j: one compiler at a time (232 s of the full run of
  // 2026-12-01 21:00 went to the build). Built here first on both cores, that action finds the
  // work done. If this make fails, node-gyp's action runs it again and reports what it finds.
  const librdkafka = join(stagedDir, 'deps', 'librdkafka');
  const pre = spawnSync('make', ['-j', '2', '-C', librdkafka, 'libs', 'install'], { env, encoding: 'utf8', timeout: 1_200_000, maxBuffer: 256 << 20 });
  if (pre.status !== 0) log(`librdkafka's parallel make exited ${pre.status ?? pre.error?.message}; node-gyp builds it on one core`);
  const r = spawnSync(node.path, [...gyp, 'rebuild', `--nodedir=${headers}`, '-j', '2'], { cwd: stagedDir, env, encoding: 'utf8', timeout: 1_800_000, maxBuffer: 256 << 20 });
  const binary = join(stagedDir, 'build', 'Release', 'node-librdkafka.node');
  if (r.status !== 0 || !existsSync(binary)) {
    const tail = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-3).join(' | ');
    rmSync(staging, { recursive: true, force: true });
    return { ok: false, version, reason: `node-gyp rebuild failed (${r.error?.message ?? `exit ${r.status}`}): ${tail}` };
  }
  // The objects of librdkafka's own build are not needed once it is installed into build/deps.
  spawnSync('make', ['-C', librdkafka, 'clean'], { encoding: 'utf8' });
  rmSync(home, { recursive: true, force: true });
  renameSync(staging, home);
  const loaded = probe(node.path, dir);
  if (typeof loaded === 'string') return { ok: false, version, reason: `the node-rdkafka just built does not load under Node ${node.version}: ${loaded}` };
  const marker: Marker = { node: node.version, ...loaded };
  writeFileSync(markerFile, `${JSON.stringify(marker)}\n`);
  log(`built node-rdkafka ${version} (librdkafka ${loaded.librdkafka}: ${loaded.features.join(', ')}) in ${Math.round((Date.now() - started) / 1000)} s`);
  return result(marker, true);
}
