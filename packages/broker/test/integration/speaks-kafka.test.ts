// Acceptance of the foundation: a real broker, a topic, ProducerPerformance load, and a raw TCP
// ApiVersions exchange written out here, byte by byte, with no codec of ours involved.
import { connect } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { consoleConsumer, consumerPerformance, createTopic, describeTopic, producerPerformance, useKafka, type TestKafka } from '../../src/index.js';

let kafka: TestKafka;
const topic = `foundation-${Date.now()}`;

test.before(async () => {
  kafka = await useKafka();
});
test.after(async () => {
  await kafka?.release();
});

/** Sends one frame and returns the first whole response frame (without its size prefix). */
function exchange(host: string, port: number, frame: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port }, () => socket.write(frame));
    let got = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer in 10 s'));
    }, 10_000);
    socket.on('data', (c: Buffer) => {
      got = Buffer.concat([got, c]);
      if (got.length >= 4 && got.length >= 4 + got.readInt32BE(0)) {
        clearTimeout(timer);
        socket.end();
        resolve(got.subarray(4, 4 + got.readInt32BE(0)));
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** Reads a Kafka unsigned varint at o; returns [value, next offset]. */
function uvarint(b: Buffer, o: number): [number, number] {
  let value = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    const byte = b[o++]!;
    value |= (byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [value >>> 0, o];
  }
  throw new Error('varint too long');
}

test('a topic is created and loaded with ProducerPerformance, and every record reads back', async () => {
  await createTopic(kafka, { topic, partitions: 3 });
  const described = await describeTopic(kafka, topic);
  assert.is(described.length, 3);
  const produced = await producerPerformance(kafka, { topic, numRecords: 20_000, recordSize: 100, compression: 'lz4' });
  assert.is(produced.records, 20_000);
  const consumed = await consumerPerformance(kafka, { topic, messages: 20_000 });
  assert.is(consumed.records, 20_000);
  // 20,000 records of 100 bytes: the tool counts MiB of values.
  assert.ok(Math.abs(consumed.mb - (20_000 * 100) / 1024 / 1024) < 0.01, `consumed ${consumed.mb} MB`);
});

test('the broker answers a hand-written ApiVersions v3 request on raw TCP', async () => {
  // The worked example of shared/docs/kafka-protocol.md section 1.7, correlation id 7.
  const request = Buffer.from(
    '00000023' + // size 35
      '0012' +
      '0003' +
      '00000007' + // api key 18, version 3, correlation id 7
      '0008' +
      Buffer.from('tsclient').toString('hex') + // client id: int16 length even in header v2
      '00' + // header tagged fields
      '09' +
      Buffer.from('ts-kafka').toString('hex') + // compact string, length + 1
      '06' +
      Buffer.from('0.1.0').toString('hex') +
      '00', // body tagged fields
    'hex',
  );
  assert.is(request.length, 4 + 35);
  const [host, port] = kafka.bootstrap.split(',')[0]!.split(':');
  const frame = await exchange(host!, Number(port), request);

  // Response header v0 (ApiVersions answers always use it): correlation id only.
  assert.is(frame.readInt32BE(0), 7, 'correlation id echoed');
  assert.is(frame.readInt16BE(4), 0, 'error code NONE');
  // ApiKeys: compact array (count + 1), each entry int16 key, int16 min, int16 max, tagged fields.
  let [count, o] = uvarint(frame, 6);
  count -= 1;
  assert.ok(count > 20, `a broker supports many APIs, got ${count}`);
  const ranges = new Map<number, [number, number]>();
  for (let i = 0; i < count; i++) {
    const key = frame.readInt16BE(o);
    ranges.set(key, [frame.readInt16BE(o + 2), frame.readInt16BE(o + 4)]);
    o += 6;
    const [tags, next] = uvarint(frame, o);
    assert.is(tags, 0, 'no tagged fields per api key');
    o = next;
  }
  // ThrottleTimeMs follows the array, then the body's tagged fields (features live there).
  assert.is(frame.readInt32BE(o), 0, 'throttle time');
  o += 4;
  const [tagCount] = uvarint(frame, o);
  assert.ok(tagCount <= 4);

  // The APIs a consumer needs, with the versions the broker must offer.
  const expectAtLeast: [number, string, number][] = [
    [18, 'ApiVersions', 3],
    [3, 'Metadata', 12],
    [1, 'Fetch', 12],
    [2, 'ListOffsets', 6],
    [10, 'FindCoordinator', 4],
    [11, 'JoinGroup', 6],
    [14, 'SyncGroup', 4],
    [12, 'Heartbeat', 4],
    [8, 'OffsetCommit', 8],
    [9, 'OffsetFetch', 8],
  ];
  for (const [key, name, version] of expectAtLeast) {
    const range = ranges.get(key);
    assert.ok(range, `${name} (${key}) is offered`);
    assert.ok(range![0] <= version && range![1] >= version, `${name} ${range![0]}-${range![1]} includes v${version}`);
  }
});

test('the console consumer reads back every record value', async () => {
  const lines = await consoleConsumer(kafka, { topic, maxMessages: 20_000, idleTimeoutMs: 20_000 });
  assert.is(lines.length, 20_000);
  // ProducerPerformance values are 100 random capital letters.
  assert.ok(
    lines.every((l) => /^[A-Z]{100}$/.test(l)),
    'every line is one record value',
  );
});

test.run();
