// Issue 5 acceptance: while consuming several GB of 1 KB records, RSS stays flat. 500 MB of
// records read 7 times over (3.5 GB) by kwire's normal consumer API in a process of its own;
// RSS is read at the end of each pass. A second process measures heap bytes allocated per record
// in a window without garbage collection. Both figures are printed for the notes.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, producerPerformance, useKafka, type TestKafka } from '@kwire/broker';

const run = promisify(execFile);
const runClient = join(dirname(fileURLToPath(import.meta.url)), '../../src/run-client.js');
const RECORDS = 500_000;
const PARTITIONS = 6;
let kafka: TestKafka;
const topic = `memory-${Date.now().toString(36)}`;

test.before(async () => {
  kafka = await useKafka();
  await createTopic(kafka, { topic, partitions: PARTITIONS });
  await producerPerformance(kafka, { topic, numRecords: RECORDS, recordSize: 1024, compression: 'lz4', props: { 'batch.size': 262144, 'linger.ms': 20 } });
});
test.after(async () => {
  await kafka?.release();
});

async function client(options: object, nodeFlags: string[] = []): Promise<any> {
  const { stdout } = await run(process.execPath, [...nodeFlags, runClient, 'kwire', JSON.stringify(options)], { maxBuffer: 1 << 20, timeout: 600_000 });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

test('RSS stays flat over 3.5 GB of 1 KB records; bytes allocated per record', async () => {
  const passes = 7;
  const r = await client({ bootstrap: kafka.bootstrap, topic, partitions: PARTITIONS, records: RECORDS, passes });
  assert.is(r.records, RECORDS * passes);
  assert.is(r.bytes, RECORDS * passes * 1024, 'every value, whole');
  const rss: number[] = r.rssByPassMb;
  const settled = rss[1]!;
  const worst = Math.max(...rss.slice(1));
  console.log(
    `  kwire: ${(r.bytes / 2 ** 30).toFixed(2)} GiB in ${r.seconds} s (${r.recordsPerSec} records/s, ${r.mbPerSec} MiB/s), CPU ${r.cpuSeconds} s, GC ${r.gcMs} ms in ${r.gcCount} collections`,
  );
  console.log(`  RSS by pass (MiB): ${rss.join(', ')}; peak ${r.peakRssMb} MiB`);
  console.log(
    `  event-loop delay at full speed (after the first pass): max ${r.steadyMaxEventLoopStallMs} ms, p99 ${r.steadyP99EventLoopDelayMs} ms; whole run with start-up: max ${r.maxEventLoopStallMs} ms`,
  );
  // Flat: after the first pass has warmed the pools, later passes do not grow (10% + 32 MiB slack
  // for allocator noise; a leak of even 100 bytes per record would add 170 MiB per pass here).
  assert.ok(worst <= settled * 1.1 + 32, `RSS grew from ${settled} MiB to ${worst} MiB`);
  assert.ok(r.peakRssMb < 700, `peak RSS ${r.peakRssMb} MiB`);

  const a = await client({ bootstrap: kafka.bootstrap, topic, partitions: PARTITIONS, records: 20_000, passes: 1, allocWindow: 50_000 }, [
    '--expose-gc',
    '--min-semi-space-size=128',
    '--max-semi-space-size=128',
  ]);
  assert.ok(typeof a.allocBytesPerRecord === 'number', 'a GC-free window was found');
  console.log(`  heap allocated per record (GC-free window of 50,000 records): ${a.allocBytesPerRecord} B`);
  assert.ok(a.allocBytesPerRecord < 2_000, `${a.allocBytesPerRecord} B per 1 KB record: values must not be copied`);
});

test.run();
