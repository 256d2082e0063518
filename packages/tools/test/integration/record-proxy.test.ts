// The recording proxy against a real broker: many connections at once, pipelined requests sent in
// random pieces, a fetch response of about 50 MB. Every byte a client sent must be what was
// recorded, and every byte it received must be the broker's (rewritten Metadata/FindCoordinator
// frames aside, which are checked against the originals by the conformance runner).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, producerPerformance, useKafka, type TestKafka } from '@kwire/broker';
import { ApiKey, decodeResponseFrame, encodeRequestFrame, FrameSplitter, ZERO_UUID } from '@kwire/protocol';
import { formatReport, runConformance, streamFileName, type ExchangeLine, type IndexLine } from '../../src/index.js';
import { RecordingProxy } from '../../src/record/proxy.js';
import { parseAddress } from '../../src/record/address.js';
import { prng } from '@kwire/testkit';

let kafka: TestKafka;
const run = Date.now().toString(36);
const dirs: string[] = [];

test.before(async () => {
  kafka = await useKafka();
});

test.after(async () => {
  await kafka?.release();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A client that sends frames in random pieces and keeps every byte and frame it receives. */
class Client {
  readonly socket: Socket;
  /** host:port of our end, as the proxy's index names the client. */
  readonly local: string;
  readonly sent: Buffer[] = [];
  readonly received: Buffer[] = [];
  readonly frames: Buffer[] = [];
  private readonly splitter = new FrameSplitter();
  private waiter: (() => void) | undefined;

  private constructor(socket: Socket) {
    this.socket = socket;
    this.local = `${socket.localAddress}:${socket.localPort}`;
    socket.on('data', (c: Buffer) => {
      this.received.push(c);
      this.splitter.push(c, (f) => this.frames.push(Buffer.from(f)));
      this.waiter?.();
    });
  }

  static async connect(address: string): Promise<Client> {
    const a = parseAddress(address);
    const socket = connect({ host: a.host, port: a.port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    return new Client(socket);
  }

  async send(bytes: Buffer, rnd: () => number): Promise<void> {
    this.sent.push(bytes);
    let o = 0;
    while (o < bytes.length) {
      const n = Math.min(bytes.length - o, 1 + Math.floor(rnd() * 300));
      this.socket.write(bytes.subarray(o, o + n));
      o += n;
      if (rnd() < 0.2) await new Promise((r) => setImmediate(r));
    }
  }

  async frameCount(n: number, timeoutMs = 60_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.frames.length < n) {
      if (Date.now() > until) throw new Error(`${this.frames.length} of ${n} frames after ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 100);
      });
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.end();
    });
  }
}

function indexOf(dir: string): IndexLine[] {
  return readFileSync(join(dir, 'index.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as IndexLine);
}

/** What the client of connection `conn` must have received: the broker stream, rewritten frames substituted. */
function expectedReceived(dir: string, conn: number, index: IndexLine[]): Buffer {
  const broker = readFileSync(join(dir, streamFileName(conn, 'broker')));
  const exchanges = index.filter((l): l is ExchangeLine => l.type === 'exchange' && l.conn === conn && l.response !== null);
  if (!exchanges.some((x) => x.rewritten)) return broker;
  const rewritten = readFileSync(join(dir, streamFileName(conn, 'rewritten')));
  const parts: Buffer[] = [];
  for (const x of exchanges.sort((a, b) => a.response!.offset - b.response!.offset)) {
    parts.push(x.rewritten ? rewritten.subarray(x.rewritten.offset, x.rewritten.offset + x.rewritten.length) : broker.subarray(x.response!.offset, x.response!.offset + x.response!.length));
  }
  return Buffer.concat(parts);
}

async function startProxy(): Promise<{ proxy: RecordingProxy; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'kwire-record-it-'));
  dirs.push(dir);
  const proxy = await RecordingProxy.start({ listen: { host: '127.0.0.1', port: 0 }, target: parseAddress(kafka.bootstrap.split(',')[0]!), out: dir });
  return { proxy, dir };
}

test('40 connections at once, 30 pipelined requests each in random pieces: every byte accounted for', async () => {
  const topic = `record-many-${run}`;
  await createTopic(kafka, { topic, partitions: 3 });
  const { proxy, dir } = await startProxy();
  const CONNECTIONS = 40;
  const REQUESTS = 30;
  const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => Client.connect(proxy.address)));
  await Promise.all(
    clients.map(async (c, i) => {
      const frames: Buffer[] = [];
      for (let r = 0; r < REQUESTS; r++) {
        const correlationId = r + 1;
        const body =
          r % 3 === 0
            ? { apiKey: ApiKey.ApiVersions, apiVersion: 4, body: { clientSoftwareName: `client-${i}`, clientSoftwareVersion: '1.0' } }
            : r % 3 === 1
              ? { apiKey: ApiKey.Metadata, apiVersion: 12, body: { topics: [{ topicId: ZERO_UUID, name: topic }], allowAutoTopicCreation: false } }
              : {
                  apiKey: ApiKey.ListOffsets,
                  apiVersion: 10,
                  body: { replicaId: -1, topics: [{ name: topic, partitions: [0, 1, 2].map((p) => ({ partitionIndex: p, timestamp: -1n })) }], timeoutMs: 5000 },
                };
        frames.push(Buffer.from(encodeRequestFrame({ ...body, correlationId, clientId: `client-${i}` })));
      }
      await c.send(Buffer.concat(frames), prng(i + 1));
      await c.frameCount(REQUESTS);
      assert.equal(
        c.frames.map((f) => f.readInt32BE(4)),
        Array.from({ length: REQUESTS }, (_, r) => r + 1),
        `client ${i}: answers in order`,
      );
      const md = decodeResponseFrame(ApiKey.Metadata, 12, c.frames[1]!).body as { brokers: { host: string; port: number }[]; topics: { partitions: unknown[] }[] };
      assert.is(`${md.brokers[0]!.host}:${md.brokers[0]!.port}`, proxy.address, 'the broker address is the proxy');
      assert.is(md.topics[0]!.partitions.length, 3);
    }),
  );
  await Promise.all(clients.map((c) => c.close()));
  await proxy.stop();

  const index = indexOf(dir);
  const connections = index.filter((l) => l.type === 'connection');
  assert.is(connections.length, CONNECTIONS);
  for (const conn of connections) {
    const id = conn.type === 'connection' ? conn.conn : -1;
    const exchanges = index.filter((l): l is ExchangeLine => l.type === 'exchange' && l.conn === id);
    assert.is(exchanges.length, REQUESTS, `conn ${id}: every exchange indexed`);
    const client = clients.find((c) => c.local === (conn.type === 'connection' ? conn.client : ''))!;
    assert.ok(client, `conn ${id}: a client of ours`);
    assert.ok(readFileSync(join(dir, streamFileName(id, 'client'))).equals(Buffer.concat(client.sent)), `conn ${id}: the recorded client stream is what the client sent`);
    assert.ok(Buffer.concat(client.received).equals(expectedReceived(dir, id, index)), `conn ${id}: the client received the broker's bytes`);
  }
  const report = runConformance(dir);
  assert.ok(report.ok, formatReport(report));
  assert.is(report.totals.passed, CONNECTIONS * REQUESTS * 2);
});

test('a fetch response of about 50 MB passes whole and unchanged, and is recorded as it came', async () => {
  const topic = `record-big-${run}`;
  await createTopic(kafka, { topic, partitions: 1 });
  await producerPerformance(kafka, { topic, numRecords: 52_000, recordSize: 1000, props: { 'batch.size': 1 << 20, 'linger.ms': 20 } });
  const { proxy, dir } = await startProxy();
  const client = await Client.connect(proxy.address);
  await client.send(Buffer.from(encodeRequestFrame({ apiKey: ApiKey.Metadata, apiVersion: 12, correlationId: 1, clientId: 'big', body: { topics: [{ topicId: ZERO_UUID, name: topic }] } })), prng(1));
  await client.frameCount(1);
  const topicId = (decodeResponseFrame(ApiKey.Metadata, 12, client.frames[0]!).body as { topics: { topicId: string }[] }).topics[0]!.topicId;
  const fetch = (correlationId: number) =>
    Buffer.from(
      encodeRequestFrame({
        apiKey: ApiKey.Fetch,
        apiVersion: 17,
        correlationId,
        clientId: 'big',
        body: {
          maxWaitMs: 500,
          minBytes: 1,
          maxBytes: 64 << 20,
          isolationLevel: 0,
          sessionId: 0,
          sessionEpoch: -1,
          topics: [{ topicId, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 64 << 20 }] }],
        },
      }),
    );
  // Pipelined behind the big one: a small request whose answer must come after it, intact.
  await client.send(
    Buffer.concat([
      fetch(2),
      Buffer.from(encodeRequestFrame({ apiKey: ApiKey.ApiVersions, apiVersion: 3, correlationId: 3, clientId: 'big', body: { clientSoftwareName: 'big', clientSoftwareVersion: '1' } })),
    ]),
    prng(2),
  );
  await client.frameCount(3, 120_000);
  const big = client.frames[1]!;
  assert.ok(big.length > 50_000_000, `${big.length} bytes`);
  assert.is(client.frames[2]!.readInt32BE(4), 3);

  // The same request straight to the broker gives the same bytes.
  const direct = await Client.connect(kafka.bootstrap.split(',')[0]!);
  await direct.send(fetch(2), prng(3));
  await direct.frameCount(1, 120_000);
  assert.ok(direct.frames[0]!.equals(big), 'through the proxy and straight from the broker: the same 50 MB');
  await direct.close();
  await client.close();
  await proxy.stop();

  const index = indexOf(dir);
  assert.ok(Buffer.concat(client.received).equals(expectedReceived(dir, 1, index)), 'the client received what was recorded');
  assert.ok(readFileSync(join(dir, streamFileName(1, 'client'))).equals(Buffer.concat(client.sent)));
  const x = index.find((l): l is ExchangeLine => l.type === 'exchange' && l.correlationId === 2)!;
  assert.is(x.response!.length, big.length);
  const report = runConformance(dir);
  assert.ok(report.ok, formatReport(report));
  assert.ok((report.codecs['none'] ?? 0) > 40, 'the batches of the big response were decoded and rebuilt');
});

test.run();
