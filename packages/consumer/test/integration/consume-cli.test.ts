// kwire consume against a real broker: JSON lines with the shape, value and none formats,
// group mode with commits, and clear failures. Then issue 29's CLI: no warning on a normal exit,
// a cluster that cannot be reached, | head, Ctrl-C, --from's forms, kcat's short options, one-line
// usage errors and a start outside the log. KWIRE_CLI_BIN runs the suite against another build's bin.
import { execFile, spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, useKafka, type TestKafka } from '@kwire/broker';
import { TestProducer, until } from '@kwire/testkit';

const exec = promisify(execFile);
const bin = process.env.KWIRE_CLI_BIN ?? join(dirname(fileURLToPath(import.meta.url)), '../../../bin/kwire.js');
let kafka: TestKafka;
const topic = `cli-${Date.now().toString(36)}`;
/** Enough records that their JSON lines overflow a pipe's buffer (64 KiB) many times. */
const big = `${topic}-big`;
const BIG_RECORDS = 20_000;

test.before(async () => {
  kafka = await useKafka();
  await createTopic(kafka, { topic, partitions: 2 });
  const producer = new TestProducer(kafka.bootstrap);
  await producer.send(topic, 0, [
    { key: Buffer.from('k0'), value: Buffer.from('hello'), headers: [{ key: 'h', value: Buffer.from('v') }], timestamp: 1_700_000_000_000 },
    { key: null, value: Buffer.from([0xff, 0xfe, 0x00]) },
    { key: Buffer.from('k2'), value: null },
  ]);
  await producer.send(topic, 1, [{ value: Buffer.from('on one') }, { value: Buffer.from('and two') }]);
  await createTopic(kafka, { topic: big, partitions: 1 });
  for (let i = 0; i < BIG_RECORDS; i += 5_000) {
    await producer.send(
      big,
      0,
      Array.from({ length: 5_000 }, (_, j) => ({ value: Buffer.from(`record ${i + j} `.padEnd(100, '.')) })),
      { batchSize: 500 },
    );
  }
  await producer.close();
});
test.after(async () => {
  await kafka?.release();
});

async function kwire(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return kwireRaw('consume', '--bootstrap', kafka.bootstrap, ...args);
}

async function kwireRaw(...args: string[]): Promise<{ stdout: string; stderr: string; code: number; ms: number }> {
  const started = Date.now();
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, ...args], { timeout: 60_000 });
    return { stdout, stderr, code: 0, ms: Date.now() - started };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code, ms: Date.now() - started };
  }
}

function offsets(stdout: string): string[] {
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const r = JSON.parse(l) as { partition: number; offset: string };
      return `${r.partition}@${r.offset}`;
    });
}

/** kwire consume as a child whose stdout the test reads and may close, and which it may signal. */
function spawnKwire(...args: string[]) {
  const child = spawn(process.execPath, [bin, 'consume', '--bootstrap', kafka.bootstrap, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })));
  const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
  void exited.then(() => clearTimeout(guard));
  return {
    child,
    exited,
    out: () => stdout,
    err: () => stderr,
    async waitFor(what: () => boolean, ms = 20_000) {
      const deadline = Date.now() + ms;
      while (!what()) {
        if (Date.now() > deadline) throw new Error(`timed out; stdout ${stdout.length} chars, stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

test('--format json: one object per line, keys and values as text or base64, offsets as strings', async () => {
  const { stdout, stderr, code } = await kwire('--topic', topic, '--partition', '0', '--from', 'earliest', '--max-records', '3');
  assert.is(code, 0, stderr);
  const lines = stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(lines[0], { topic, partition: 0, offset: '0', timestamp: 1_700_000_000_000, key: 'k0', value: 'hello', headers: [{ key: 'h', value: 'v' }] });
  assert.equal(lines[1].value, { base64: Buffer.from([0xff, 0xfe, 0x00]).toString('base64') }, 'invalid UTF-8 comes as base64');
  assert.is(lines[1].key, null);
  assert.is(lines[2].value, null, 'a tombstone');
  assert.is(lines[2].offset, '2');
  assert.match(stderr, /kwire consume: 3 records, \d+ value bytes, [\d.]+ s, \d+ records\/s/);
});

test('--from OFFSET and --from @TIMESTAMP_MS; a bad --from is a usage error', async () => {
  const byOffset = await kwire('--topic', topic, '--partition', '0', '--from', '1', '--max-records', '1');
  assert.is(byOffset.code, 0, byOffset.stderr);
  assert.is(JSON.parse(byOffset.stdout.trim()).offset, '1');
  // Record 0 has timestamp 1_700_000_000_000; the other two were written now.
  const byTime = await kwire('--topic', topic, '--partition', '0', '--from', '@1700000000001', '--max-records', '1');
  assert.is(byTime.code, 0, byTime.stderr);
  assert.is(JSON.parse(byTime.stdout.trim()).offset, '1', 'the first record at or after the time');
  const bad = await kwire('--topic', topic, '--from', 'yesterday');
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /--from must be beginning, end, an offset, -N \(the last N records\), an ISO-8601 date or time, or @MS/);
});

test('--format value and none; --idle-exit-ms ends a run that reached the end', async () => {
  const v = await kwire('--topic', topic, '--partition', '1', '--from', 'earliest', '--format', 'value', '--idle-exit-ms', '4000');
  assert.is(v.code, 0, v.stderr);
  assert.is(v.stdout, 'on one\nand two\n');
  const n = await kwire('--topic', topic, '--from', 'earliest', '--format', 'none', '--idle-exit-ms', '4000');
  assert.is(n.stdout, '');
  assert.match(n.stderr, /5 records/);
});

test('--group: reads as a member and commits; a second run of the group starts after what was committed', async () => {
  const group = `cli-group-${topic}`;
  const first = await kwire('--topic', topic, '--group', group, '--from', 'earliest', '--max-records', '5', '--format', 'none');
  assert.is(first.code, 0, first.stderr);
  assert.match(first.stderr, /5 records/);
  const again = await kwire('--topic', topic, '--group', group, '--from', 'earliest', '--idle-exit-ms', '3000', '--format', 'none');
  assert.is(again.code, 0, again.stderr);
  assert.match(again.stderr, /0 records/, 'everything was committed by the first run');
});

test('failures: exit codes and clear messages', async () => {
  const missing = await kwire('--topic', `no-such-${topic}`);
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /topic no-such-.* does not exist/);
  const usage = await kwire('--format', 'xml', '--topic', topic);
  assert.is(usage.code, 2);
  assert.match(usage.stderr, /--format must be json, value or none/);
  const bad = await kwire('--topic', topic, '--pattern', 'x');
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /--pattern needs --group/);
});

// Issue 29: the CLI as handy as kcat.

test('a normal exit after --max-records logs no warning (the pool closed on purpose is no failure)', async () => {
  // The race (a connection being opened as close() closes the pool) came on every run: three runs.
  for (let i = 0; i < 3; i++) {
    const r = await kwire('--topic', topic, '--from', 'earliest', '--max-records', '3', '--format', 'none');
    assert.is(r.code, 0, r.stderr);
    assert.not.match(r.stderr, /WARN|ERROR/, r.stderr);
    assert.match(r.stderr, /^kwire consume: 3 records, /);
  }
});

/** A port with nothing listening: one taken from the system, then given back. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

test('nothing listening at --bootstrap: one line that says so, exit 3, at once', async () => {
  const port = await freePort();
  for (const args of [
    ['--topic', 'x'],
    ['--topic', 'x', '--group', 'g'],
  ]) {
    const r = await kwireRaw('consume', '--bootstrap', `127.0.0.1:${port}`, ...args);
    assert.is(r.code, 3, r.stderr);
    assert.is(r.stderr, `kwire consume: cannot reach the cluster at 127.0.0.1:${port}: connection refused (ECONNREFUSED); is a broker running there, and is the address right?\n`);
    assert.ok(r.ms < 5_000, `${r.ms} ms`);
  }
});

test('a server that accepts and never answers: cannot reach the cluster within --connect-timeout', async () => {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  try {
    const r = await kwireRaw('consume', '--bootstrap', `127.0.0.1:${port}`, '--topic', 'x', '--connect-timeout', '1000');
    assert.is(r.code, 3, r.stderr);
    assert.is(r.stderr, `kwire consume: cannot reach the cluster at 127.0.0.1:${port}: no answer within 1000 ms (--connect-timeout); is a broker running there, and is the address right?\n`);
    // The timeout, a bounded close, and the exit: well under the 30 s of request.timeout.ms.
    assert.ok(r.ms < 6_000, `${r.ms} ms`);
    // Ctrl-C while it waits: no waiting out the timeout.
    const accepted = sockets.size;
    const child = spawn(process.execPath, [bin, 'consume', '--bootstrap', `127.0.0.1:${port}`, '--topic', 'x', '--connect-timeout', '30000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // The CLI handles signals before it connects: once it has connected, Ctrl-C is its to handle.
    await until('the CLI connected', () => sockets.size > accepted, 20_000, 20);
    const sentAt = Date.now();
    child.kill('SIGINT');
    assert.is(await exited, 130, stderr);
    assert.ok(Date.now() - sentAt < 4_000, `${Date.now() - sentAt} ms`);
    assert.match(stderr, /^kwire consume: 0 records, .*\(interrupted by SIGINT\)\n$/);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  }
});

test('| head: the reader going away ends the run quietly (exit 0, no stack trace), and at once', async () => {
  const k = spawnKwire('--topic', big, '--from', 'earliest');
  await k.waitFor(() => k.out().includes('\n'));
  // What `head -1` does once it has its line.
  k.child.stdout.destroy();
  const closedAt = Date.now();
  const { code, at } = await k.exited;
  assert.is(code, 0, k.err());
  assert.not.match(k.err(), /EPIPE|Error|at /, k.err());
  assert.match(k.err(), /^kwire consume: \d+ records, /m, k.err());
  const read = Number(/(\d+) records/.exec(k.err())![1]);
  assert.ok(read < BIG_RECORDS, `stopped before reading everything (${read} of ${BIG_RECORDS})`);
  assert.ok(at - closedAt < 5_000, `${at - closedAt} ms after the pipe closed`);
});

for (const [signal, exit] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  test(`${signal}: closes the consumer, prints the summary, exits ${exit}`, async () => {
    const k = spawnKwire('--topic', topic, '--group', `cli-signal-${signal}-${topic}`, '--from', 'earliest', '--format', 'value');
    // Running: the group joined and the five records printed; then it waits for more.
    await k.waitFor(() => k.out().split('\n').length > 5);
    const sentAt = Date.now();
    k.child.kill(signal);
    const { code, at } = await k.exited;
    assert.is(code, exit, k.err());
    assert.match(k.err(), new RegExp(`^kwire consume: 5 records, .*\\(interrupted by ${signal}\\)\\n$`));
    assert.ok(at - sentAt < 6_000, `${at - sentAt} ms`);
  });
}

test('--from beginning|end|-N|ISO time, and -e stops at the end as of the start', async () => {
  const beginning = await kwire('--topic', topic, '--from', 'beginning', '--exit-at-end');
  assert.is(beginning.code, 0, beginning.stderr);
  assert.equal(offsets(beginning.stdout).sort(), ['0@0', '0@1', '0@2', '1@0', '1@1']);
  const end = await kwire('--topic', topic, '--from', 'end', '--exit-at-end');
  assert.is(end.code, 0, end.stderr);
  assert.is(end.stdout, '');
  assert.match(end.stderr, /^kwire consume: 0 records/);
  // The last two of each partition (partition 1 has only two).
  const lastTwo = await kwire('--topic', topic, '--from', '-2', '--exit-at-end');
  assert.is(lastTwo.code, 0, lastTwo.stderr);
  assert.equal(offsets(lastTwo.stdout).sort(), ['0@1', '0@2', '1@0', '1@1']);
  const lastTen = await kwire('--topic', topic, '--partition', '0', '--from', '-10', '-e');
  assert.equal(offsets(lastTen.stdout), ['0@0', '0@1', '0@2'], 'floored at the log start');
  // Record 0 of partition 0 has timestamp 1_700_000_000_000 (2023-11-14T22:13:20Z), the others now.
  const atTime = await kwire('--topic', topic, '--partition', '0', '--from', '2023-11-14T22:13:20Z', '--max-records', '1');
  assert.is(atTime.code, 0, atTime.stderr);
  assert.equal(offsets(atTime.stdout), ['0@0']);
  const after = await kwire('--topic', topic, '--partition', '0', '--from', '2023-11-14T22:13:20.001Z', '--max-records', '1');
  assert.equal(offsets(after.stdout), ['0@1']);
  const zone = await kwire('--topic', topic, '--partition', '0', '--from', '2023-11-14T23:13:21+01:00', '--max-records', '1');
  assert.equal(offsets(zone.stdout), ['0@1'], 'a zone offset counts');
});

test('with --group, --from takes beginning or end only, and says why in one line', async () => {
  for (const from of ['-2', '1', '@1700000000000', '2023-11-14']) {
    const r = await kwire('--topic', topic, '--group', `cli-g-${topic}`, '--from', from);
    assert.is(r.code, 2, r.stderr);
    assert.is(r.stderr.split('\n').length, 2, r.stderr);
    assert.match(r.stderr, /^kwire consume: with --group, --from is where a partition without a committed offset starts: beginning or end, not .*; run 'kwire consume --help' for the options\n$/);
  }
  const ok = await kwire('-t', topic, '-G', `cli-g-${topic}`, '-o', 'beginning', '-c', '5', '--format', 'none');
  assert.is(ok.code, 0, ok.stderr);
  assert.match(ok.stderr, /5 records/);
});

test("kcat's letters: -b -t -p -o -c (and -G above)", async () => {
  const r = await kwireRaw('consume', '-b', kafka.bootstrap, '-t', topic, '-p', '0', '-o', '1', '-c', '1');
  assert.is(r.code, 0, r.stderr);
  assert.equal(offsets(r.stdout), ['0@1']);
});

test('a bad argument: one line naming it and where the options are (exit 2); --help: the whole usage (exit 0)', async () => {
  const cases: [string[], RegExp][] = [
    [['--bogus'], /unknown option --bogus/],
    [['--max-record', '3'], /unknown option --max-record \(did you mean --max-records\?\)/],
    [['--from-beginning'], /unknown option --from-beginning: kwire consume says --from beginning/],
    [['--bootstrap-server', 'x:1'], /unknown option --bootstrap-server: kwire consume says --bootstrap \(-b\)/],
    [['-o'], /--from needs a value/],
    [['--format', 'xml'], /--format must be json, value or none, not "xml"/],
    [['-c', 'many'], /--max-records \(-c\) must be a positive number, not "many"/],
    [['mytopic'], /unexpected argument "mytopic"/],
  ];
  for (const [args, problem] of cases) {
    const r = await kwire('--topic', topic, ...args);
    assert.is(r.code, 2, `${args}: ${r.stderr}`);
    assert.match(r.stderr, problem);
    assert.match(r.stderr, /^kwire consume: [^\n]*; run 'kwire consume --help' for the options\n$/, `one line: ${r.stderr}`);
    assert.is(r.stdout, '');
  }
  const help = await kwireRaw('consume', '--help');
  assert.is(help.code, 0);
  assert.match(help.stdout, /^usage: kwire consume /);
  for (const option of ['-b, --bootstrap', '-t, --topic', '-G, --group', '-o, --from', '-c, --max-records', '-p, --partition', '-e, --exit-at-end', '--connect-timeout']) {
    assert.ok(help.stdout.includes(option), option);
  }
});

test('a start outside the log: the range is said, and where reading starts', async () => {
  const past = await kwire('--topic', topic, '--partition', '0', '--from', '500', '--idle-exit-ms', '1500');
  assert.is(past.code, 0, past.stderr);
  assert.is(past.stdout, '');
  assert.match(past.stderr, new RegExp(`^kwire consume: ${topic}-0: offset 500 is past the end of the log \\(log start 0, end 3\\): starting at latest \\(auto.offset.reset\\), offset 3\\n`));
  assert.not.match(past.stderr, /-1/);
  const earliest = await kwire('--topic', topic, '--partition', '0', '--from', '500', '--idle-exit-ms', '4000', '-X', 'auto.offset.reset=earliest');
  assert.match(earliest.stderr, /starting at earliest \(auto.offset.reset\), offset 0/);
  assert.equal(offsets(earliest.stdout), ['0@0', '0@1', '0@2']);
  const none = await kwire('--topic', topic, '--partition', '0', '--from', '500', '-X', 'auto.offset.reset=none');
  assert.is(none.code, 1, none.stderr);
  assert.match(none.stderr, /^kwire consume: .*-0: offset 500 is past the end of the log \(log start 0, end 3\), and auto.offset.reset is none\n$/);
});

test.run();
