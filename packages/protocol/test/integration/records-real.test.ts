// Record batches written by the real Java producer, read back from the broker's own log segment
// files (the bytes a Fetch serves, as the broker stores them): every codec, and a transactional
// run with its COMMIT markers. This file starts its own single-node cluster because it reads the
// broker's data directory, which an external KWIRE_BOOTSTRAP broker would not expose.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, producerPerformance, startKafka, type CompressionType, type KafkaCluster } from '@kwire/broker';
import { isXerialSnappy } from '../../src/compression/index.js';
import { BufferPool, ControlRecordType, readRecordBatches, type RecordBatch } from '../../src/records/index.js';

let kafka: KafkaCluster;
const run = Date.now().toString(36);
const RECORDS = 20_000;
const pool = new BufferPool();
const CAPITALS = /^[A-Z]{100}$/;

test.before(async () => {
  kafka = await startKafka({ heapMb: 384 });
});

test.after(async () => {
  await kafka?.stop();
});

/** The bytes of partition 0's first segment, straight from the broker's data dir. */
function segment(topic: string): Buffer {
  const dir = join(kafka.nodes[0]!.dataDir, `${topic}-0`);
  assert.ok(readdirSync(dir).includes('00000000000000000000.log'), `segment file in ${dir}`);
  return readFileSync(join(dir, '00000000000000000000.log'));
}

interface Decoded {
  batches: RecordBatch[];
  values: string[];
  offsets: bigint[];
  controls: { offset: bigint; type: number; producerId: bigint }[];
  /** The first batch's records section as stored (still compressed), copied before release. */
  firstPayload: Buffer;
}

function decodeAll(bytes: Buffer): Decoded {
  const reader = readRecordBatches(bytes, { pool });
  const out: Decoded = { batches: [], values: [], offsets: [], controls: [], firstPayload: Buffer.alloc(0) };
  for (const batch of reader) {
    if (out.batches.length === 0) out.firstPayload = Buffer.from(batch.raw.subarray(61));
    out.batches.push(batch);
    if (batch.isControl) {
      const c = batch.controlRecord!;
      out.controls.push({ offset: batch.baseOffset, type: c.type, producerId: batch.producerId });
      out.offsets.push(batch.records()[0]!.offset);
    } else {
      for (const r of batch.records()) {
        assert.is(r.key, null, 'ProducerPerformance sends null keys');
        assert.is(r.headerCount, 0);
        out.values.push(r.valueString()!);
        out.offsets.push(r.offset);
      }
    }
    batch.release();
  }
  assert.is(reader.truncatedTail, 0, 'a closed-out segment ends on a batch boundary');
  return out;
}

const CODECS: CompressionType[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

for (const codec of CODECS) {
  test(`${codec}: Java producer batches read back from the log segment`, async () => {
    const topic = `records-real-${codec}-${run}`;
    await createTopic(kafka, { topic, partitions: 1 });
    await producerPerformance(kafka, { topic, numRecords: RECORDS, recordSize: 100, compression: codec });
    const bytes = segment(topic);
    const { batches, values, offsets, controls, firstPayload: payload } = decodeAll(bytes);

    assert.is(values.length, RECORDS);
    assert.is(controls.length, 0);
    for (const v of values) assert.ok(CAPITALS.test(v), `a ProducerPerformance payload: ${v}`);
    offsets.forEach((o, i) => assert.is(o, BigInt(i), 'offsets contiguous from 0'));
    assert.ok(batches.length > 1, `several batches (${batches.length})`);
    for (const b of batches) {
      assert.is(b.magic, 2);
      assert.is(b.compression, codec);
      assert.is(b.timestampType, 'CreateTime');
      assert.ok(b.partitionLeaderEpoch >= 0, 'the leader stamped its epoch');
      assert.ok(b.maxTimestamp > 1_600_000_000_000 && b.maxTimestamp < Date.now() + 60_000, 'plausible timestamps');
      assert.is(b.lastOffset, b.baseOffset + BigInt(b.recordCount - 1));
      // The launcher's producer runs with acks=1, which turns idempotence off: no producer id,
      // no sequence (either both are set or neither).
      assert.is(b.producerId, -1n);
      assert.is(b.baseSequence, -1);
      assert.is(b.isTransactional, false);
    }
    // What Java's codecs put on the wire, checked on the raw bytes.
    if (codec === 'snappy') assert.ok(isXerialSnappy(payload), 'snappy-java writes the xerial framing');
    if (codec === 'lz4') assert.equal([...payload.subarray(0, 6)], [0x04, 0x22, 0x4d, 0x18, 0x60, 0x40], 'LZ4 frame, FLG 0x60, BD 0x40');
    if (codec === 'zstd') assert.equal([...payload.subarray(0, 4)], [0x28, 0xb5, 0x2f, 0xfd], 'a zstd frame');
    if (codec === 'gzip') assert.equal([...payload.subarray(0, 2)], [0x1f, 0x8b], 'a gzip member');
    // Every byte of the segment was a whole batch.
    assert.is(
      batches.reduce((n, b) => n + b.sizeInBytes, 0),
      bytes.length,
    );
  });
}

test('transactional producer: data batches flagged transactional, COMMIT markers in control batches', async () => {
  const topic = `records-real-txn-${run}`;
  await createTopic(kafka, { topic, partitions: 1 });
  await producerPerformance(kafka, {
    topic,
    numRecords: 5000,
    recordSize: 100,
    compression: 'lz4',
    transactionalId: `kwire-records-${run}`,
    transactionDurationMs: 200,
    props: { acks: 'all' }, // transactions need idempotence, which needs acks=all
  });
  const { batches, values, offsets, controls } = decodeAll(segment(topic));
  assert.is(values.length, 5000);
  for (const v of values) assert.ok(CAPITALS.test(v));
  assert.ok(controls.length >= 1, `at least one COMMIT marker (${controls.length})`);
  for (const c of controls) assert.is(c.type, ControlRecordType.COMMIT);
  const data = batches.filter((b) => !b.isControl);
  const producerIds = new Set(data.map((b) => b.producerId));
  assert.is(producerIds.size, 1);
  for (const b of data) {
    assert.ok(b.isTransactional, 'every data batch is transactional');
    assert.ok(b.producerId >= 0n && b.baseSequence >= 0, 'idempotent: producer id and sequence set');
  }
  for (const b of batches.filter((x) => x.isControl)) {
    assert.ok(b.isTransactional, 'markers are transactional too');
    assert.is(b.recordCount, 1);
    assert.is(b.compression, 'none');
    assert.ok(producerIds.has(b.producerId));
  }
  // Markers take offsets too: data and markers together are contiguous from 0.
  offsets.forEach((o, i) => assert.is(o, BigInt(i)));
  assert.is(offsets.length, 5000 + controls.length);
});

test.run();
