// `npm run chaos -- --minutes N --seed S`: builds as the test command does, then runs the chaos
// test's long form (packages/consumer/test/integration/chaos/cli.ts) with the arguments given.
// KWIRE_CHAOS_SEED=S replays one seed. --skip-install builds without installing.
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
const result = spawnSync(process.execPath, [join(root, 'packages/consumer/dist/test/integration/chaos/cli.js'), ...args], { cwd: root, stdio: 'inherit' });
process.exit(result.status ?? 1);
