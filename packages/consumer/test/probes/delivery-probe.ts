// Delivery probe (issue 16): the consumer's own work per record between a Fetch answer and the
// application, without a broker or a socket, so that two builds can be compared on a noisy machine.
//
//   node packages/consumer/dist/test/probes/delivery-probe.js --mode records --size 100 --per-batch 2000
//
// One partition's answer as the fetcher hands it over: 1 MiB of wire batches of --per-batch records
// of --size B (random A-Z values, null keys, as ProducerPerformance writes them), CRCs checked. A
// FetchedPartition over it gives batches of max.poll.records (--max, 500) until it is done, and every
// value is touched: through `batch.records` (the default path: a record object and a Buffer view
// each) or `batch.cursor()` (the zero-allocation path). Reported: CPU ns per record over --rounds
// rounds of --round-ms each (the median, min and max), after a warm-up.
//
// To compare two builds, run it in each checkout, alternating, several times: the machine's noise
// is larger than the differences looked for. Measured with it (Node 24, 2 shared cores, 6
// alternations, medians of the medians): walking a batch cut by max.poll.records once instead of
// twice (d5545a5) took the default path from 87 to 82 ns a record and the cursor from 57 to 52, at
// 100 B in batches of 2,000.
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { BufferPool, encodeRecordBatch, type RecordInput } from '@kwire/protocol';
import { recordContext, type BatchCursor } from '../../src/records/index.js';
import { fetchedFrom } from '../unit/fetched-fixture.js';

const HELP = `delivery-probe: the consumer's CPU per record from a Fetch answer to the application, no broker

  --mode records|cursor   how the application reads (default records)
  --size B                value size (default 100)
  --per-batch N           records per wire batch (default 2000, as the bench's producer writes 100 B)
  --max N                 max.poll.records (default 500)
  --rounds N              timed rounds (default 5)
  --round-ms MS           length of a round (default 600)
  --help`;

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'records' },
    size: { type: 'string', default: '100' },
    'per-batch': { type: 'string', default: '2000' },
    max: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '5' },
    'round-ms': { type: 'string', default: '600' },
    help: { type: 'boolean' },
  },
});
if (values.help || (values.mode !== 'records' && values.mode !== 'cursor')) {
  console.log(HELP);
  process.exit(values.help ? 0 : 2);
}
const cursorMode = values.mode === 'cursor';
const size = Number(values.size);
const perBatch = Number(values['per-batch']);
const max = Number(values.max);

/** 1 MiB (at least one batch) of wire batches, as one partition of a Fetch answer holds them. */
function answer(): { bytes: Buffer; records: number } {
  const batches = Math.max(1, Math.floor((1 << 20) / (perBatch * (size + 10))));
  const parts: Buffer[] = [];
  for (let b = 0; b < batches; b++) {
    const input: RecordInput[] = [];
    for (let i = 0; i < perBatch; i++) {
      const value = randomBytes(size);
      for (let j = 0; j < size; j++) value[j] = 65 + (value[j]! % 26);
      input.push({ key: null, value, timestamp: 1_700_000_000_000 + i });
    }
    parts.push(encodeRecordBatch(input, { baseOffset: BigInt(b * perBatch) }));
  }
  return { bytes: Buffer.concat(parts), records: batches * perBatch };
}

const { bytes, records } = answer();
const context = recordContext('t', 0, 'buffer', 'buffer', true);
const pool = new BufferPool();
// Kept in int32 range: a sum that became a double would allocate a box per update.
let sink = 0;
let cursor: BatchCursor | undefined;

/** The answer delivered once, every value touched; returns the records delivered. */
function deliverOnce(): number {
  const { data } = fetchedFrom(bytes, { highWatermark: BigInt(records), pool, context });
  let n = 0;
  for (let batch = data.next(max); batch !== null; batch = data.done ? null : data.next(max)) {
    if (cursorMode) {
      cursor = batch.cursor(cursor);
      for (let r = cursor.next(); r !== null; r = cursor.next()) sink = (sink ^ r.valueLength ^ r.data[r.valueOffset]!) | 0;
    } else {
      const rs = batch.records;
      for (let i = 0; i < rs.length; i++) {
        const v = rs[i]!.value as Buffer;
        sink = (sink ^ v.length ^ v[0]! ^ v[v.length - 1]!) | 0;
      }
    }
    n += batch.count;
    batch.release();
  }
  if (n !== records) throw new Error(`delivered ${n} records of ${records}`);
  return n;
}

const warmEnd = performance.now() + 1000;
while (performance.now() < warmEnd) deliverOnce();
const rounds: number[] = [];
for (let r = 0; r < Number(values.rounds); r++) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < Number(values['round-ms'])) n += deliverOnce();
  const c = process.cpuUsage(c0);
  rounds.push(((c.user + c.system) * 1000) / n);
}
rounds.sort((a, b) => a - b);
const f = (x: number) => x.toFixed(1);
console.log(
  `${values.mode}, ${size} B values, ${perBatch} a wire batch, max.poll.records ${max}: ${f(rounds[rounds.length >> 1]!)} ns a record (CPU; min ${f(rounds[0]!)}, max ${f(rounds.at(-1)!)})${sink === 0x7fffffff ? ' ' : ''}`,
);
