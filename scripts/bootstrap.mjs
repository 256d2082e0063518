// Installs the workspace and builds it, with nothing but Node and npm on the machine:
// pnpm comes through npx at the version pinned in package.json's packageManager field.
// Used by `npm test` and `npm run bench`; `node scripts/bootstrap.mjs --build-only` skips the install.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function pnpmSpec() {
  const { packageManager } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  if (!/^pnpm@\d+\.\d+\.\d+$/.test(packageManager ?? '')) throw new Error(`package.json packageManager must pin pnpm, not ${packageManager}`);
  return packageManager;
}

function step(title, command, args) {
  const started = Date.now();
  process.stdout.write(`\n== ${title}\n`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, npm_config_yes: 'true' } });
  if (result.error) throw new Error(`${title}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${title} failed (exit ${result.status ?? result.signal})`);
  process.stdout.write(`== ${title}: done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

/** pnpm install from the committed lockfile (a no-op in about a second when nothing changed). */
export function install() {
  step(`install (${pnpmSpec()})`, 'npx', ['-y', pnpmSpec(), 'install', '--frozen-lockfile', '--reporter=append-only']);
}

/** One tsc -b over the project references: protocol, consumer, bench and the broker launcher. */
export function build() {
  step('build (tsc -b)', process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-b', join(root, 'tsconfig.json')]);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    if (!process.argv.includes('--build-only')) install();
    build();
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
