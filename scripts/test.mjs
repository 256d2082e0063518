// The test command (`npm test`, and therefore CI's .ci/run):
//   1. installs the workspace (pnpm through npx) and builds it (tsc -b);
//   2. runs every package's unit suite under this Node (>= 20) and again under Node 24 (the current
//      LTS, fetched from the npm registry as the `node` package);
//   3. resolves Kafka from Maven Central, starts one broker for the run (unless KWIRE_BOOTSTRAP
//      names an existing one) and runs every integration suite against it; tests that need
//      something else (three nodes, SASL, TLS) start their own; the chaos test (a cluster of its
//      own, minutes of sleeps and fault windows: ALONGSIDE) runs next to the suites after the
//      bench's, its output printed as one block when it ends;
//   4. checks that no JVM started by the run is still alive;
//   (and before the unit suites, the house rules: `biome ci`, formatting and lint, biome.jsonc;
//   the architecture rules: dependency-cruiser, .dependency-cruiser.cjs; and the API reports:
//   api-extractor, scripts/api-report.mjs);
//   5. ends with one line: "N passed, N failed".
//
// Options: --package NAME (one package), --unit (unit suites only), --integration (integration
// only), --no-node24, --skip-install (build only). Suites live in packages/*/test/{unit,integration}
// and run from their compiled form in dist/test.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { build, install, root } from './bootstrap.mjs';

const NODE_LTS = 'node@24.21.0';
const UNIT_TIMEOUT_MS = 10 * 60_000;
const INTEGRATION_TIMEOUT_MS = 50 * 60_000;
/**
 * Integration files that start a cluster of their own and spend their minutes in sleeps and fault
 * windows: they run alongside the other integration suites (after the bench's, a measurement),
 * not after them. The chaos test (three modes) is about 5 of npm test's minutes.
 */
const ALONGSIDE = [{ pkg: 'consumer', name: 'chaos', pattern: 'chaos\\.test\\.js$' }];

const { values: opts } = parseArgs({
  options: {
    package: { type: 'string', multiple: true },
    unit: { type: 'boolean' },
    integration: { type: 'boolean' },
    'no-node24': { type: 'boolean' },
    'skip-install': { type: 'boolean' },
  },
});
const wantUnit = opts.unit || !opts.integration;
const wantIntegration = opts.integration || !opts.unit;

/** @type {{ name: string, passed: number, failed: number, skipped: number, note?: string }[]} */
const results = [];
let interrupted = false;
/** The suites' child processes running now (two at once in the integration phase). */
const current = new Set();

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    // The children got the terminal's SIGINT too; make sure of it, then let the launcher's own
    // handlers (installed once a broker starts here) and the exit below stop what we started.
    interrupted = true;
    for (const child of current) child.kill('SIGTERM');
    process.stdout.write(`\n${signal}: stopping\n`);
  });
}

function packagesWith(kind) {
  const dirs = readdirSync(join(root, 'packages')).sort();
  return dirs
    .filter((p) => !opts.package || opts.package.includes(p))
    .map((p) => ({ pkg: p, dir: join('packages', p, 'dist', 'test', kind) }))
    .filter(({ dir }) => existsSync(join(root, dir)) && readdirSync(join(root, dir)).some((f) => f.endsWith('.test.js')));
}

const stripAnsi = (s) => s.replace(/\x1b\[[0-9;]*m/g, '');

/**
 * The failed tests in a suite's (ANSI-stripped) uvu output: uvu names the file on a line of its
 * own, then each failure as `FAIL  "test name"` followed by the assertion's first line. The summary
 * repeats them, so that the last lines of a long log (all a CI page may keep) say what failed.
 */
function failuresIn(text) {
  const lines = text.split('\n');
  const failures = [];
  let file = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (/^\S+\.test\.js$/.test(line)) file = line;
    const m = /^FAIL\s+(?:.*?\s+)?"(.*)"$/.exec(line);
    if (m) {
      const message = (lines.slice(i + 1).find((l) => l.trim()) ?? '').trim();
      failures.push(`${file} "${m[1]}": ${message.length > 240 ? `${message.slice(0, 240)}...` : message}`);
    }
  }
  return failures;
}

/**
 * Runs one uvu suite in a child process, echoing its output; parses uvu's totals. `pattern` and
 * `ignore` narrow the suite's files; `buffered` holds the output back until the suite ends, for a
 * suite that runs alongside another (so that the log still reads one suite at a time).
 */
function runSuite(name, nodeBin, dir, env, timeoutMs, { pattern = '\\.test\\.js$', ignore, buffered = false } = {}) {
  return new Promise((resolve) => {
    const held = [];
    const write = (stream, text) => (buffered ? held.push([stream, text]) : stream.write(text));
    write(process.stdout, `\n== ${name}\n`);
    const started = Date.now();
    const child = spawn(nodeBin, [join(root, 'node_modules/uvu/bin.js'), dir, pattern, ...(ignore ? ['-i', ignore] : [])], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    current.add(child);
    let out = '';
    // When each file's header line (uvu prints the file name as a file starts) was seen: the time
    // per file, for the summary line that says where a suite's minutes go.
    const fileStarts = [];
    let lingerTimer;
    let lingered = false;
    let partial = '';
    child.stdout.on('data', (c) => {
      out += c;
      write(process.stdout, c);
      const lines = (partial + c).split('\n');
      partial = lines.pop();
      for (const l of lines) {
        const file = stripAnsi(l).trim();
        if (/^\S+\.test\.js$/.test(file)) fileStarts.push({ file, at: Date.now() });
        // uvu's last line: a process still alive 30 s after it keeps a handle open (a connection
        // a failed test never closed) and would hold the run until the suite's timeout.
        if (/^Duration:/.test(file) && !lingerTimer) {
          lingerTimer = setTimeout(() => {
            lingered = true;
            child.kill('SIGKILL');
          }, 30_000);
        }
      }
    });
    child.stderr.on('data', (c) => {
      out += c;
      write(process.stderr, c);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(lingerTimer);
      current.delete(child);
      const text = stripAnsi(out);
      const num = (label) => {
        const all = [...text.matchAll(new RegExp(`^\\s*${label}:\\s*(\\d+)`, 'gm'))];
        return all.length ? Number(all.at(-1)[1]) : undefined;
      };
      const total = num('Total');
      const passed = num('Passed');
      const skipped = num('Skipped') ?? 0;
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const failures = failuresIn(text);
      let result;
      if (total === undefined || passed === undefined) {
        // uvu never printed its totals: the suite crashed, hung or was killed. One failure.
        const why = timedOut ? `timed out after ${timeoutMs / 60_000} min` : `ended with ${signal ?? `exit code ${code}`} before reporting`;
        result = { name, passed: passed ?? 0, failed: 1, skipped, note: why, failures };
      } else {
        const failed = total - passed + (lingered || (code !== 0 && total === passed) ? 1 : 0);
        const note = timedOut ? 'timed out' : lingered ? 'its process did not exit within 30 s of its totals (a handle left open); killed' : undefined;
        result = { name, passed, failed, skipped, note, failures };
      }
      if (buffered) {
        process.stdout.write(`\n== ${name} (ran alongside the suites above; its output follows)\n`);
        for (const [stream, text] of held) stream.write(text);
      }
      process.stdout.write(`== ${name}: ${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped in ${seconds} s${result.note ? ` (${result.note})` : ''}\n`);
      const perFile = fileStarts.map((f, i) => ({ file: f.file, s: ((fileStarts[i + 1]?.at ?? Date.now()) - f.at) / 1000 })).sort((a, b) => b.s - a.s);
      if (perFile.length > 1 && Number(seconds) > 60)
        process.stdout.write(
          `== ${name}, slowest files: ${perFile
            .slice(0, 10)
            .map((f) => `${f.file} ${f.s.toFixed(0)} s`)
            .join(', ')}\n`,
        );
      results.push(result);
      resolve(result);
    });
  });
}

/**
 * One check of the tree as a suite of one: runs `command`, prints its own report and one result
 * line, "1 passed" or "1 failed", and on failure says what to do.
 */
function check({ name, short, command, args, note, failure }) {
  process.stdout.write(`\n== ${name}\n`);
  const started = Date.now();
  const r = spawnSync(command, args, { cwd: root, encoding: 'utf8' });
  process.stdout.write(`${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? `${r.error.message}\n` : ''}`);
  const ok = r.status === 0;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(`== ${short}: ${ok ? '1 passed, 0 failed' : '0 passed, 1 failed'} in ${seconds} s\n`);
  results.push({ name, passed: ok ? 1 : 0, failed: ok ? 0 : 1, skipped: 0, note: ok ? undefined : note, failures: ok ? [] : [failure] });
}

/** The house rules (biome.jsonc): the tree formatted as Biome formats it and no lint error. */
function houseRules() {
  check({
    name: 'format and lint (biome ci)',
    short: 'format and lint',
    command: join(root, 'node_modules/.bin/biome'),
    args: ['ci', '--max-diagnostics=30', '.'],
    note: 'run `npx biome format --write .` and fix the lint errors shown',
    failure: 'biome ci: the tree is not formatted, or a lint rule failed',
  });
}

/**
 * The architecture rules (.dependency-cruiser.cjs): no import circles, which workspace package may
 * import which, @kwire/consumer's layers. Cruises every package's src (the compiled packages it
 * imports are looked up in dist, so this runs after the build).
 */
function architectureRules() {
  const sources = readdirSync(join(root, 'packages'))
    .sort()
    .map((p) => join('packages', p, 'src'))
    .filter((dir) => existsSync(join(root, dir)));
  check({
    name: 'architecture rules (dependency-cruiser)',
    short: 'architecture rules',
    command: process.execPath,
    args: [join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'), '--config', '.dependency-cruiser.cjs', '--output-type', 'err-long', ...sources],
    note: 'each violation above names its rule; the rules and why are in .dependency-cruiser.cjs',
    failure: 'dependency-cruiser: an import breaks a rule of .dependency-cruiser.cjs',
  });
}

/**
 * The API reports (scripts/api-report.mjs, api-extractor.json): every entry point of the published
 * packages must export what its checked-in packages/<pkg>/etc/*.api.md says, so that a change of a
 * public surface fails here until the report is updated (`node scripts/api-report.mjs --update`)
 * and shows in review. Reads the compiled .d.ts: runs after the build.
 */
function apiReports() {
  check({
    name: 'API reports (api-extractor)',
    short: 'API reports',
    command: process.execPath,
    args: [join(root, 'scripts/api-report.mjs')],
    note: 'a public surface changed: `node scripts/api-report.mjs --update`, then review and commit packages/*/etc/*.api.md',
    failure: 'api-extractor: an entry point no longer matches its API report',
  });
}

function node24() {
  process.stdout.write(`\n== fetching ${NODE_LTS} from the npm registry\n`);
  const r = spawnSync('npx', ['-y', '-p', NODE_LTS, 'node', '-p', 'process.execPath'], { cwd: root, encoding: 'utf8' });
  const bin = r.status === 0 ? r.stdout.trim().split('\n').at(-1) : undefined;
  if (!bin || !existsSync(bin)) {
    process.stderr.write(r.stderr ?? '');
    return undefined;
  }
  return bin;
}

async function main() {
  if (!opts['skip-install']) install();
  build();

  if (wantUnit && !opts.package) {
    houseRules();
    architectureRules();
    apiReports();
  }

  if (wantUnit) {
    const suites = packagesWith('unit');
    for (const { pkg, dir } of suites) {
      if (interrupted) break;
      await runSuite(`${pkg} unit (node ${process.versions.node})`, process.execPath, dir, {}, UNIT_TIMEOUT_MS);
    }
    if (!opts['no-node24'] && suites.length && !interrupted) {
      const bin = node24();
      if (!bin) {
        results.push({ name: `unit suites under ${NODE_LTS}`, passed: 0, failed: 1, skipped: 0, note: 'could not install Node 24 from the npm registry' });
      } else {
        for (const { pkg, dir } of suites) {
          if (interrupted) break;
          await runSuite(`${pkg} unit (node ${NODE_LTS.slice(5)})`, bin, dir, {}, UNIT_TIMEOUT_MS);
        }
      }
    }
  }

  const { ensureKafka, startKafka, strayJvms } = await import('../packages/broker/dist/src/index.js');
  if (wantIntegration && !interrupted) {
    const suites = packagesWith('integration');
    if (suites.length) {
      const log = (line) => process.stdout.write(`[broker] ${line}\n`);
      let cluster;
      const env = {};
      try {
        await ensureKafka(undefined, { log });
        if (process.env.KWIRE_BOOTSTRAP) {
          log(`using the existing broker at ${process.env.KWIRE_BOOTSTRAP}`);
        } else {
          cluster = await startKafka({ log });
          env.KWIRE_BOOTSTRAP = cluster.bootstrap;
        }
      } catch (err) {
        results.push({ name: 'integration broker', passed: 0, failed: 1, skipped: 0, note: err.message.split('\n')[0] });
        process.stderr.write(`${err.stack ?? err}\n`);
      }
      if (env.KWIRE_BOOTSTRAP || process.env.KWIRE_BOOTSTRAP) {
        // The files that bring their own cluster and mostly wait (ALONGSIDE) run next to the other
        // suites rather than after them, once the bench's suite (a measurement) is done.
        const alongside = [];
        const startAlongside = () => {
          for (const a of ALONGSIDE) {
            const suite = suites.find((x) => x.pkg === a.pkg);
            if (!suite || interrupted || !readdirSync(join(root, suite.dir)).some((f) => new RegExp(a.pattern).test(f))) continue;
            alongside.push(runSuite(`${a.pkg} integration, ${a.name}`, process.execPath, suite.dir, env, INTEGRATION_TIMEOUT_MS, { pattern: a.pattern, buffered: true }));
          }
        };
        for (const { pkg, dir } of suites) {
          if (interrupted) break;
          if (pkg !== 'bench' && alongside.length === 0) startAlongside();
          const ignore = ALONGSIDE.find((a) => a.pkg === pkg)?.pattern;
          await runSuite(`${pkg} integration`, process.execPath, dir, env, INTEGRATION_TIMEOUT_MS, { ignore });
        }
        if (alongside.length === 0) startAlongside();
        await Promise.all(alongside);
      }
      await cluster?.stop();
    }
  }

  // Every JVM the run started, in this process or a suite's, must be gone by now: one whose owner
  // was this process or has exited (the suites' processes have). JVMs of another run going on at
  // the same time (their owner alive) are not ours.
  await new Promise((r) => setTimeout(r, 500));
  const ownerAlive = (pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return err.code === 'EPERM';
    }
  };
  const strays = strayJvms().filter((s) => s.owner === process.pid || !ownerAlive(s.owner));
  if (strays.length) {
    for (const s of strays) {
      process.stderr.write(`stray JVM still running: pid ${s.pid} (${s.label}, started by pid ${s.owner}); killing it\n`);
      try {
        process.kill(s.pid, 'SIGKILL');
      } catch {}
    }
    results.push({ name: 'no JVM left running', passed: 0, failed: strays.length, skipped: 0 });
  } else if (wantIntegration) {
    results.push({ name: 'no JVM left running', passed: 1, failed: 0, skipped: 0 });
  }
}

let crashed;
try {
  await main();
} catch (err) {
  crashed = err;
  process.stderr.write(`\n${err.stack ?? err}\n`);
}
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0) + (crashed || interrupted ? 1 : 0);
process.stdout.write('\n');
for (const r of results) {
  process.stdout.write(`  ${r.failed ? 'FAIL' : 'ok  '}  ${r.name}: ${r.passed} passed, ${r.failed} failed${r.skipped ? `, ${r.skipped} skipped` : ''}${r.note ? ` (${r.note})` : ''}\n`);
  for (const f of r.failed ? (r.failures ?? []).slice(0, 5) : []) process.stdout.write(`          x ${f}\n`);
}
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exitCode = failed || !passed ? 1 : 0;
