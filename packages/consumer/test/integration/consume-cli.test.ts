// kwire consume against a real broker: JSON lines with the shape, value and none formats,
// group mode with commits, and clear failures.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, useKafka, type TestKafka } from '@kwire/broker';
import { TestProducer } from './produce-helper.js';

const exec = promisify(execFile);
const bin = join(dirname(fileURLToPath(import.meta.url)), '../../../bin/kwire.js');
let kafka: TestKafka;
const topic = `cli-${Date.now().toString(36)}`;

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
  await producer.close();
});
test.after(async () => {
  await kafka?.release();
});

async function kwire(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, 'consume', '--bootstrap', kafka.bootstrap, ...args], { timeout: 60_000 });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
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
  assert.match(bad.stderr, /--from must be earliest, latest, an offset or @TIMESTAMP_MS/);
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

test.run();
