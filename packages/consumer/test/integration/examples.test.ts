// The consumer package's examples, run as a user outside this repository runs them: copied to a
// directory of their own whose node_modules holds only @kwire/consumer and kafkajs (what the
// examples say to install), with only KWIRE_BOOTSTRAP (plus PATH and HOME) in the environment.
// Each must exit 0 and print what it promises. The READMEs show some of them whole
// (test/unit/guide.test.ts checks those blocks against the files).
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { useKafka, type TestKafka } from '@kwire/broker';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const examples = join(pkg, 'examples');
const names = readdirSync(examples).filter((f) => f.endsWith('.mjs'));
const tested = new Set<string>();
let kafka: TestKafka;
let dir: string;

test.before(async () => {
  kafka = await useKafka();
  dir = mkdtempSync(join(tmpdir(), 'kwire-examples-'));
  mkdirSync(join(dir, 'node_modules/@kwire'), { recursive: true });
  // As `npm install @kwire/consumer kafkajs` leaves them (the package's own dependencies resolve
  // from where it really is).
  symlinkSync(pkg, join(dir, 'node_modules/@kwire/consumer'), 'dir');
  symlinkSync(realpathSync(join(pkg, 'node_modules/kafkajs')), join(dir, 'node_modules/kafkajs'), 'dir');
  for (const name of names) cpSync(join(examples, name), join(dir, name));
});
test.after(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await kafka?.release();
});

function example(name: string): Promise<{ stdout: string; stderr: string }> {
  tested.add(name);
  const env = { KWIRE_BOOTSTRAP: kafka.bootstrap, PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [name], { cwd: dir, env, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(err, { message: `${name}: ${err.message}\n--- stdout\n${stdout}\n--- stderr\n${stderr}` }));
      else resolve({ stdout, stderr });
    });
  });
}

test('no example needs the repository: no @kwire/broker, no relative import out of examples/', () => {
  assert.ok(names.length >= 5, names.join(', '));
  for (const name of names) {
    const source = readFileSync(join(examples, name), 'utf8');
    assert.not.match(source, /@kwire\/broker/, name);
    assert.not.match(source, /from '\.\.?\//, name);
    assert.match(source, /process\.env\.KWIRE_BOOTSTRAP/, name);
  }
});

test('examples/quickstart.mjs reads one partition from its start and one from an offset', async () => {
  const { stdout } = await example('quickstart.mjs');
  const lines = stdout.trim().split('\n');
  assert.is(lines.at(-1), 'done');
  assert.equal(lines.slice(0, -1).sort(), ['0 0n event 0', '0 1n event 2', '0 2n event 4', '0 3n event 6', '0 4n event 8', '1 2n event 5', '1 3n event 7', '1 4n event 9']);
});

test('examples/tail.mjs reads every record through two streams', async () => {
  const { stdout } = await example('tail.mjs');
  assert.match(stdout, /stream 0: 2500 records from partitions 0 and 2/);
  assert.match(stdout, /stream 1: 2500 records from partitions 1 and 3/);
  assert.match(stdout, /read 5000 records/);
});

test('examples/cursor.mjs reads every record through the zero-allocation cursor', async () => {
  assert.match((await example('cursor.mjs')).stdout, /read 20000 records through the cursor: 2000000 value bytes/);
});

test('examples/group.mjs: a record printed, failures retried and logged, everything committed, metrics printed', async () => {
  const { stdout, stderr } = await example('group.mjs');
  assert.match(stdout, /ConsumerRecord \{\n {2}topic: 'orders-[a-z0-9]+',\n {2}partition: \d,\n {2}offset: 0n,/);
  assert.match(stdout, /key: <Buffer 'customer-0'>,\n {2}value: \{ order: \d+, cents: \d+ \},\n {2}headers: \[\],/);
  assert.match(stdout, /handled 3000 records \(3 failures retried\)/);
  assert.match(stdout, /the group's committed offsets add up to 3000 \(read with kafkajs\)/);
  assert.match(stdout, /^kwire_consumer_records_consumed_total \d+$/m);
  // The default logger: each retried failure is a warning on stderr.
  assert.is(stderr.match(/WARN kwire: processing failed/g)?.length, 3, stderr);
});

test("examples/concurrent.mjs: a handler calling an HTTP service, many at once, each account's records in order", async () => {
  const { stdout } = await example('concurrent.mjs');
  assert.match(stdout, /^handled 3000 records in [\d.]+ s \(\d+ records\/s; one at a time would take 15 s or more\)$/m);
  const most = Number(/^at most (\d+) requests at once; each account's payments in order: yes$/m.exec(stdout)?.[1]);
  assert.ok(most > 20, `concurrent requests: ${most}\n${stdout}`);
  assert.match(stdout, /^closed: 6 partitions committed, 0 records in flight$/m);
});

test('examples/share.mjs: three share consumers handle every job once, failed ones come back', async () => {
  const { stdout } = await example('share.mjs');
  assert.match(stdout, /^2000 jobs handled in \d+ deliveries; [1-9]\d* handler failures, whose jobs came back$/m);
  const perMember = [...stdout.matchAll(/^member \d: (\d+) jobs$/gm)].map((m) => Number(m[1]));
  assert.is(perMember.length, 3);
  assert.is(
    perMember.reduce((a, b) => a + b, 0),
    2000,
  );
});

test('every example in examples/ is run above', () => {
  assert.equal([...tested].sort(), [...names].sort());
});

test.run();
