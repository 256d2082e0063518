// `npm run bench`: install and build as the test command does, then run the benchmark CLI of
// @kwire/bench with the arguments given (e.g. npm run bench -- --quick).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { build, install, root } from './bootstrap.mjs';

try {
  if (!process.argv.includes('--skip-install')) install();
  build();
} catch (err) {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
}
const args = process.argv.slice(2).filter((a) => a !== '--skip-install');
const result = spawnSync(process.execPath, [join(root, 'packages/bench/dist/src/cli.js'), ...args], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
