// The recording proxy against fake brokers on loopback: bytes through it unchanged in both
// directions however they are chunked, pipelined requests matched to responses by correlation id,
// Produce with acks=0, broker addresses rewritten (with the codec, and spliced for old versions),
// APIs it does not know, bytes that are not Kafka, and a stop with requests still waiting. The
// captures it writes then go through the conformance runner.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiKey, decodeRequestFrame, decodeRequestHeader, decodeResponseFrame, encodeRecordBatch, encodeRequestFrame, encodeResponseFrame, FrameSplitter, Writer } from '@kwire/protocol';
import { formatReport, runConformance, streamFileName, type ExchangeLine, type IndexLine } from '../../src/index.js';
import { RecordingProxy } from '../../src/record/proxy.js';
import { parseAddress } from '../../src/record/address.js';
import { parseRequestHead } from '../../src/record/request-head.js';
import { prng } from '@kwire/testkit';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dirs: string[] = [];
const servers: Server[] = [];

test.after(() => {
  for (const s of servers) s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Writes `bytes` in pieces of 1..max bytes, yielding between some of them. */
async function writeChunked(socket: Socket, bytes: Buffer, rnd: () => number, max = 7): Promise<void> {
  let o = 0;
  while (o < bytes.length) {
    const n = Math.min(bytes.length - o, 1 + Math.floor(rnd() * max));
    socket.write(bytes.subarray(o, o + n));
    o += n;
    if (rnd() < 0.3) await new Promise((r) => setImmediate(r));
  }
}

// ---- old (pre-flexible) frames the codec does not encode: built by hand --------------------------

function oldRequest(apiKey: number, version: number, correlationId: number, body: Buffer): Buffer {
  const w = new Writer();
  w.writeInt32(0);
  w.writeInt16(apiKey);
  w.writeInt16(version);
  w.writeInt32(correlationId);
  w.writeNullableString('old-client');
  w.writeRaw(body);
  const b = Buffer.from(w.finish());
  b.writeInt32BE(b.length - 4, 0);
  return b;
}

function frame(build: (w: Writer) => void): Buffer {
  const w = new Writer();
  w.writeInt32(0);
  build(w);
  const b = Buffer.from(w.finish());
  b.writeInt32BE(b.length - 4, 0);
  return b;
}

/** Metadata v4 response: throttle, brokers (id, host, port, rack), cluster id, controller, no topics. */
function metadataV4(correlationId: number, brokers: { id: number; host: string; port: number }[]): Buffer {
  return frame((w) => {
    w.writeInt32(correlationId);
    w.writeInt32(0);
    w.writeInt32(brokers.length);
    for (const b of brokers) {
      w.writeInt32(b.id);
      w.writeString(b.host);
      w.writeInt32(b.port);
      w.writeNullableString(null);
    }
    w.writeNullableString('old-cluster');
    w.writeInt32(1);
    w.writeInt32(0);
  });
}

/** FindCoordinator v2 response: throttle, error, message, node, host, port. */
function findCoordinatorV2(correlationId: number, host: string, port: number): Buffer {
  return frame((w) => {
    w.writeInt32(correlationId);
    w.writeInt32(0);
    w.writeInt16(0);
    w.writeNullableString(null);
    w.writeInt32(2);
    w.writeString(host);
    w.writeInt32(port);
  });
}

// ---- a fake broker ------------------------------------------------------------------------------

interface Fake {
  port: number;
  /** Every byte received, per connection. */
  received: Buffer[][];
}

/**
 * Answers every request in order, written in random pieces: ApiVersions, Metadata v12 (naming
 * itself and `peer`), Metadata v4, FindCoordinator v2 and v6, Produce (none for acks=0), api 22
 * with raw bytes; never answers correlation id 777.
 */
async function fakeBroker(seed: number, peer: () => number, clusterId: string): Promise<Fake> {
  const fake: Fake = { port: 0, received: [] };
  const rnd = prng(seed);
  const server = createServer((socket) => {
    const mine: Buffer[] = [];
    fake.received.push(mine);
    const splitter = new FrameSplitter();
    let queue = Promise.resolve();
    socket.on('data', (chunk: Buffer) => {
      mine.push(Buffer.from(chunk));
      try {
        splitter.push(chunk, (f) => {
          const bytes = Buffer.from(f);
          queue = queue.then(() => answer(socket, bytes));
        });
      } catch {
        // Not Kafka frames (the garbage test): keep reading, answer nothing.
      }
    });
    socket.on('error', () => {});
  });
  const answer = async (socket: Socket, req: Buffer) => {
    const h = decodeRequestHeader(req);
    const me = { nodeId: 1, host: '127.0.0.1', port: fake.port, rack: null };
    const other = { nodeId: 2, host: '127.0.0.1', port: peer(), rack: null };
    let out: Buffer | undefined;
    if (h.correlationId === 777) return;
    switch (h.apiKey) {
      case ApiKey.ApiVersions:
        out = encodeResponseFrame(18, h.apiVersion, h.correlationId, { errorCode: 0, apiKeys: [{ apiKey: 3, minVersion: 0, maxVersion: 13 }] });
        break;
      case ApiKey.Metadata:
        out =
          h.apiVersion === 4
            ? metadataV4(h.correlationId, [
                { id: me.nodeId, host: me.host, port: me.port },
                { id: other.nodeId, host: other.host, port: other.port },
              ])
            : encodeResponseFrame(3, h.apiVersion, h.correlationId, { brokers: [me, other], clusterId, controllerId: 1, topics: [] });
        break;
      case ApiKey.FindCoordinator:
        out =
          h.apiVersion === 2
            ? findCoordinatorV2(h.correlationId, other.host, other.port)
            : encodeResponseFrame(10, h.apiVersion, h.correlationId, {
                coordinators: [
                  { key: 'g', nodeId: 2, host: other.host, port: other.port, errorCode: 0, errorMessage: null },
                  { key: 'x', nodeId: -1, host: '', port: -1, errorCode: 15, errorMessage: 'not available' },
                ],
              });
        break;
      case ApiKey.Produce:
        // acks=0: Kafka sends nothing back.
        if ((decodeRequestFrame(req).body as { acks: number }).acks === 0) return;
        out = encodeResponseFrame(0, h.apiVersion, h.correlationId, { responses: [] });
        break;
      case 22:
      case 500:
        out = frame((w) => {
          w.writeInt32(h.correlationId);
          w.writeRaw(Buffer.from('opaque answer of an api kwire does not model'));
        });
        break;
      default:
        return;
    }
    await writeChunked(socket, Buffer.from(out), rnd, 40);
  };
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  fake.port = (server.address() as AddressInfo).port;
  return fake;
}

/** A raw client: sends frames in random pieces, keeps every byte it gets. */
class Client {
  readonly received: Buffer[] = [];
  readonly sent: Buffer[] = [];
  readonly socket: Socket;
  private readonly splitter = new FrameSplitter();
  readonly frames: Buffer[] = [];

  constructor(address: string) {
    const a = parseAddress(address);
    this.socket = connect({ host: a.host, port: a.port });
    this.socket.on('data', (c: Buffer) => {
      this.received.push(Buffer.from(c));
      this.splitter.push(c, (f) => this.frames.push(Buffer.from(f)));
    });
    this.socket.on('error', () => {});
  }

  async send(frames: Buffer[], rnd: () => number): Promise<void> {
    const all = Buffer.concat(frames);
    this.sent.push(all);
    await writeChunked(this.socket, all, rnd);
  }

  async waitFrames(n: number): Promise<void> {
    for (let i = 0; i < 500 && this.frames.length < n; i++) await sleep(10);
    assert.ok(this.frames.length >= n, `${this.frames.length} of ${n} response frames arrived`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.end();
    });
  }
}

function readIndex(dir: string): IndexLine[] {
  return readFileSync(join(dir, 'index.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as IndexLine);
}

function produce(version: number, correlationId: number, acks: number): Buffer {
  return Buffer.from(
    encodeRequestFrame({
      apiKey: 0,
      apiVersion: version,
      correlationId,
      clientId: 'c',
      body: {
        acks,
        timeoutMs: 1000,
        topicData: [{ name: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitionData: [{ index: 0, records: encodeRecordBatch([{ value: `record ${correlationId}`, timestamp: 1 }]) }] }],
      },
    }),
  );
}

test('bytes pass unchanged, pipelined exchanges are paired, addresses are rewritten, acks=0 gets no response', async () => {
  let port2 = 0;
  const b1 = await fakeBroker(1, () => port2, 'cluster-of-one');
  const b2 = await fakeBroker(2, () => b1.port, 'cluster-of-two');
  port2 = b2.port;
  const dir = mkdtempSync(join(tmpdir(), 'kwire-record-'));
  dirs.push(dir);
  const proxy = await RecordingProxy.start({ listen: { host: '127.0.0.1', port: 0 }, target: { host: '127.0.0.1', port: b1.port }, out: dir });
  const rnd = prng(42);

  const client = new Client(proxy.address);
  const requests = [
    Buffer.from(encodeRequestFrame({ apiKey: 18, apiVersion: 4, correlationId: 1, clientId: 'c', body: { clientSoftwareName: 'test-client', clientSoftwareVersion: '9.9' } })),
    Buffer.from(encodeRequestFrame({ apiKey: 3, apiVersion: 12, correlationId: 2, clientId: 'c', body: { topics: null, allowAutoTopicCreation: false } })),
    produce(13, 3, 0), // acks=0: no response
    oldRequest(3, 4, 4, Buffer.from('ffffffff01', 'hex')), // Metadata v4: null topics, allow auto creation
    produce(9, 5, 1),
    Buffer.from(encodeRequestFrame({ apiKey: 10, apiVersion: 6, correlationId: 6, clientId: 'c', body: { keyType: 0, coordinatorKeys: ['g', 'x'] } })),
    oldRequest(10, 2, 7, Buffer.from('00016700', 'hex')), // FindCoordinator v2: key "g", key type 0
    oldRequest(22, 5, 8, Buffer.from('ffff7fffffff', 'hex')), // InitProducerId: not modeled, passes through
  ];
  // Pipelined: every request is sent before any response is read, in random pieces.
  await client.send(requests, rnd);
  await client.waitFrames(7);

  // The responses, in order, to everything but the acks=0 Produce.
  const ids = client.frames.map((f) => f.readInt32BE(4));
  assert.equal(ids, [1, 2, 4, 5, 6, 7, 8]);
  const md = decodeResponseFrame(3, 12, client.frames[1]!).body as { brokers: { host: string; port: number }[]; clusterId: string };
  const proxied = await proxy.listenerMap();
  assert.is(md.clusterId, 'cluster-of-one');
  assert.is(`${md.brokers[0]!.host}:${md.brokers[0]!.port}`, proxy.address, 'broker 1 (the target) is the first listener');
  const second = `${md.brokers[1]!.host}:${md.brokers[1]!.port}`;
  assert.ok(
    proxied.some((l) => l.broker === `127.0.0.1:${b2.port}` && l.listen === second),
    'broker 2 got a listener of its own',
  );
  // Metadata v4: size, correlation id, throttle, broker count (16 bytes); broker 1: id, "127.0.0.1",
  // port, null rack (21 bytes); broker 2: id, "127.0.0.1", then its port.
  assert.is(client.frames[2]!.readInt32BE(16 + 21 + 4 + 11), Number(second.split(':')[1]), 'the Metadata v4 answer carries the listener port (spliced)');
  const fc = decodeResponseFrame(10, 6, client.frames[4]!).body as { coordinators: { host: string; port: number; errorCode: number }[] };
  assert.is(`${fc.coordinators[0]!.host}:${fc.coordinators[0]!.port}`, second);
  assert.equal([fc.coordinators[1]!.host, fc.coordinators[1]!.port], ['', -1], 'an error entry is left alone');

  // Following the rewritten address reaches broker 2 through the proxy.
  const toB2 = new Client(second);
  await toB2.send([Buffer.from(encodeRequestFrame({ apiKey: 3, apiVersion: 13, correlationId: 1, clientId: 'c', body: { topics: null } }))], rnd);
  await toB2.waitFrames(1);
  assert.is((decodeResponseFrame(3, 13, toB2.frames[0]!).body as { clusterId: string }).clusterId, 'cluster-of-two');

  await client.close();
  await toB2.close();
  await proxy.stop();

  // Byte for byte: what the client sent is what the broker got and what was recorded.
  const sent = Buffer.concat(client.sent);
  assert.ok(Buffer.concat(b1.received[0]!).equals(sent), "the broker received exactly the client's bytes");
  assert.ok(readFileSync(join(dir, streamFileName(1, 'client'))).equals(sent), 'conn-0001.client.bin holds them');
  // What the client got is the broker's stream with the rewritten frames in place of the originals.
  const index = readIndex(dir);
  const exchanges = index.filter((l): l is ExchangeLine => l.type === 'exchange' && l.conn === 1);
  const brokerStream = readFileSync(join(dir, streamFileName(1, 'broker')));
  const rewrittenStream = readFileSync(join(dir, streamFileName(1, 'rewritten')));
  const expected: Buffer[] = [];
  for (const x of [...exchanges].sort((a, b) => a.request.offset - b.request.offset)) {
    if (!x.response) continue;
    expected.push(
      x.rewritten ? rewrittenStream.subarray(x.rewritten.offset, x.rewritten.offset + x.rewritten.length) : brokerStream.subarray(x.response.offset, x.response.offset + x.response.length),
    );
  }
  assert.ok(Buffer.concat(client.received).equals(Buffer.concat(expected)), "the client received the broker's bytes, rewritten frames aside");
  assert.is(
    brokerStream.length,
    exchanges.reduce((n, x) => n + (x.response?.length ?? 0), 0),
    'every broker byte belongs to an indexed response',
  );

  // The index: every exchange with its api, version and correlation id.
  const seen = exchanges.map((x) => [x.apiKey, x.apiVersion, x.correlationId]).sort((a, b) => a[2]! - b[2]!);
  assert.equal(seen, [
    [18, 4, 1],
    [3, 12, 2],
    [0, 13, 3],
    [3, 4, 4],
    [0, 9, 5],
    [10, 6, 6],
    [10, 2, 7],
    [22, 5, 8],
  ]);
  const byId = new Map(exchanges.map((x) => [x.correlationId, x]));
  assert.is(byId.get(3)!.noResponse, 'acks=0');
  assert.is(byId.get(3)!.response, null);
  assert.equal(byId.get(1)!.software, { name: 'test-client', version: '9.9' });
  assert.equal(byId.get(2)!.software, { name: 'test-client', version: '9.9' }, 'later exchanges carry the software name');
  assert.is(byId.get(2)!.rewritten!.method, 'codec');
  assert.is(byId.get(4)!.rewritten!.method, 'splice');
  assert.is(byId.get(7)!.rewritten!.method, 'splice');
  assert.equal(byId.get(6)!.rewritten!.addresses, [{ from: `127.0.0.1:${b2.port}`, to: second }]);
  assert.is(byId.get(8)!.apiName, 'InitProducerId');
  assert.ok(index.some((l) => l.type === 'close' && l.conn === 1 && l.by === 'client'));

  // And the capture passes the conformance runner.
  const report = runConformance(dir);
  assert.ok(report.ok, formatReport(report));
  const row = (name: string, v: number) => report.rows.find((r) => r.name === name && r.version === v)!;
  assert.is(row('Metadata', 12).passed, 2);
  assert.is(row('Metadata', 4).skipped, 2);
  assert.is(row('Produce', 13).requestsPassed, 1);
  assert.is(row('InitProducerId', 5).skipped, 2);
});

test('a response held for rewriting whose size prefix (or the frame before it) is cut by chunk ends: forwarded in order, rewritten whole', async () => {
  const api = Buffer.from(encodeRequestFrame({ apiKey: 18, apiVersion: 3, correlationId: 1, clientId: 'c', body: { clientSoftwareName: 'x', clientSoftwareVersion: '1' } }));
  const md = Buffer.from(encodeRequestFrame({ apiKey: 3, apiVersion: 12, correlationId: 2, clientId: 'c', body: { topics: null, allowAutoTopicCreation: false } }));
  const apiAnswer = Buffer.from(encodeResponseFrame(18, 3, 1, { errorCode: 0, apiKeys: [{ apiKey: 3, minVersion: 0, maxVersion: 13 }] }));
  const a = apiAnswer.length;
  // Where the broker's answer stream (ApiVersions answer, then Metadata answer) is cut into separate writes.
  for (const cuts of [[a + 1], [a + 2, a + 3], [a + 3], [a - 2, a + 5], [a + 10], [1, a, a + 4]]) {
    let port = 0;
    const server = createServer((socket) => {
      const splitter = new FrameSplitter();
      let seen = 0;
      socket.on('data', (chunk: Buffer) =>
        splitter.push(chunk, () => {
          if (++seen < 2) return;
          const answer = Buffer.from(encodeResponseFrame(3, 12, 2, { brokers: [{ nodeId: 1, host: '127.0.0.1', port, rack: null }], clusterId: 'c', controllerId: 1, topics: [] }));
          const stream = Buffer.concat([apiAnswer, answer]);
          void (async () => {
            let from = 0;
            for (const cut of [...cuts, stream.length]) {
              socket.write(stream.subarray(from, cut));
              from = cut;
              await sleep(25);
            }
          })();
        }),
      );
      socket.on('error', () => {});
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
    const dir = mkdtempSync(join(tmpdir(), 'kwire-record-'));
    dirs.push(dir);
    const proxy = await RecordingProxy.start({ listen: { host: '127.0.0.1', port: 0 }, target: { host: '127.0.0.1', port }, out: dir });
    const client = new Client(proxy.address);
    await client.send([api, md], prng(9));
    await client.waitFrames(2);
    const where = `cuts ${cuts.join(',')}`;
    assert.ok(client.frames[0]!.equals(apiAnswer), `${where}: ApiVersions answer unchanged`);
    const body = decodeResponseFrame(3, 12, client.frames[1]!).body as { brokers: { host: string; port: number }[] };
    assert.is(`${body.brokers[0]!.host}:${body.brokers[0]!.port}`, proxy.address, `${where}: the address was rewritten`);
    await client.close();
    await proxy.stop();
    const index = readIndex(dir);
    assert.is(index.filter((l) => l.type === 'blind').length, 0, where);
    assert.is(index.filter((l) => l.type === 'exchange').length, 2, where);
    assert.ok(runConformance(dir).ok, where);
  }
});

test('bytes that are not Kafka frames: still forwarded and recorded, no longer indexed', async () => {
  const broker = await fakeBroker(3, () => 1, 'c');
  const dir = mkdtempSync(join(tmpdir(), 'kwire-record-'));
  dirs.push(dir);
  const proxy = await RecordingProxy.start({ listen: { host: '127.0.0.1', port: 0 }, target: { host: '127.0.0.1', port: broker.port }, out: dir });
  const client = new Client(proxy.address);
  const api = Buffer.from(encodeRequestFrame({ apiKey: 18, apiVersion: 3, correlationId: 1, clientId: 'c', body: { clientSoftwareName: 'x', clientSoftwareVersion: '1' } }));
  await client.send([api], prng(5));
  await client.waitFrames(1);
  const garbage = Buffer.from('GET / HTTP/1.1\r\nHost: kafka\r\n\r\n');
  await client.send([garbage], prng(6));
  for (let i = 0; i < 100 && Buffer.concat(broker.received[0]!).length < api.length + garbage.length; i++) await sleep(10);
  assert.ok(Buffer.concat(broker.received[0]!).equals(Buffer.concat([api, garbage])), 'the broker got the garbage too');
  await client.close();
  await proxy.stop();
  const index = readIndex(dir);
  const blind = index.filter((l) => l.type === 'blind');
  assert.equal(
    blind.map((b) => b.type === 'blind' && b.stream),
    ['client', 'broker'],
  );
  assert.ok(blind[0]!.type === 'blind' && blind[0]!.offset === api.length && /not Kafka/.test(blind[0]!.reason));
  assert.is(index.filter((l) => l.type === 'exchange').length, 1);
  assert.ok(readFileSync(join(dir, streamFileName(1, 'client'))).equals(Buffer.concat([api, garbage])));
  assert.ok(runConformance(dir).ok);
});

test('stopping with requests still waiting: recorded as unanswered; the client sees the connection close', async () => {
  const broker = await fakeBroker(4, () => 1, 'c');
  const dir = mkdtempSync(join(tmpdir(), 'kwire-record-'));
  dirs.push(dir);
  const proxy = await RecordingProxy.start({ listen: { host: '127.0.0.1', port: 0 }, target: { host: '127.0.0.1', port: broker.port }, out: dir });
  const client = new Client(proxy.address);
  const closed = new Promise<void>((resolve) => client.socket.once('close', () => resolve()));
  await client.send([Buffer.from(encodeRequestFrame({ apiKey: 3, apiVersion: 12, correlationId: 777, clientId: 'c', body: { topics: null } }))], prng(7));
  for (let i = 0; i < 100 && broker.received.length === 0; i++) await sleep(10);
  await sleep(50);
  await proxy.stop();
  await closed;
  const index = readIndex(dir);
  const x = index.find((l): l is ExchangeLine => l.type === 'exchange')!;
  assert.is(x.correlationId, 777);
  assert.is(x.noResponse, 'unanswered');
  assert.ok(index.some((l) => l.type === 'close' && l.by === 'proxy'));
  const info = JSON.parse(readFileSync(join(dir, 'capture.json'), 'utf8')) as { stoppedAt?: string; format: string };
  assert.is(info.format, 'kwire-capture');
  assert.ok(info.stoppedAt);
});

test('an API key Kafka does not define (yet) is indexed and passed through like any other', async () => {
  const broker = await fakeBroker(9, () => 1, 'c');
  const dir = mkdtempSync(join(tmpdir(), 'kwire-record-'));
  dirs.push(dir);
  const proxy = await RecordingProxy.start({ listen: { host: '127.0.0.1', port: 0 }, target: { host: '127.0.0.1', port: broker.port }, out: dir });
  const client = new Client(proxy.address);
  // (A real broker closes the connection on a key it does not know; the fake one answers.)
  const future = oldRequest(500, 3, 41, Buffer.from('cafe', 'hex'));
  const after = Buffer.from(encodeRequestFrame({ apiKey: 18, apiVersion: 3, correlationId: 42, clientId: 'c', body: { clientSoftwareName: 'x', clientSoftwareVersion: '1' } }));
  await client.send([future, after], prng(9));
  await client.waitFrames(2);
  assert.ok(Buffer.concat(broker.received[0]!).equals(Buffer.concat([future, after])));
  await client.close();
  await proxy.stop();
  const index = readIndex(dir);
  const x = index.filter((l): l is ExchangeLine => l.type === 'exchange');
  assert.equal(
    x.map((e) => [e.apiKey, e.apiName, e.correlationId]),
    [
      [500, null, 41],
      [18, 'ApiVersions', 42],
    ],
  );
  assert.not.ok(index.some((l) => l.type === 'blind'));
  const report = runConformance(dir);
  assert.ok(report.ok, formatReport(report));
  assert.is(report.rows.find((r) => r.apiKey === 500)!.skipped, 2);
});

test('a capture folder is never overwritten', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kwire-record-'));
  dirs.push(dir);
  const broker = await fakeBroker(8, () => 1, 'c');
  const first = await RecordingProxy.start({ listen: { host: '127.0.0.1', port: 0 }, target: { host: '127.0.0.1', port: broker.port }, out: dir });
  await first.stop();
  try {
    await RecordingProxy.start({ listen: { host: '127.0.0.1', port: 0 }, target: { host: '127.0.0.1', port: broker.port }, out: dir });
    assert.unreachable('a second recording into the same folder');
  } catch (err) {
    assert.match((err as Error).message, /already holds a capture/);
  }
});

test('request heads: software name, Produce acks in every layout, addresses', () => {
  const api = parseRequestHead(Buffer.from(encodeRequestFrame({ apiKey: 18, apiVersion: 5, correlationId: 3, clientId: null, body: { clientSoftwareName: 'n', clientSoftwareVersion: 'v' } })));
  assert.equal(api, { apiKey: 18, apiVersion: 5, correlationId: 3, clientId: null, software: { name: 'n', version: 'v' } });
  assert.is(parseRequestHead(produce(13, 1, 0)).acks, 0);
  assert.is(parseRequestHead(produce(9, 1, -1)).acks, -1);
  // Produce v7 (transactional id, then acks) and v2 (acks first), by hand.
  assert.is(parseRequestHead(oldRequest(0, 7, 1, Buffer.from('ffff0000', 'hex'))).acks, 0);
  assert.is(parseRequestHead(oldRequest(0, 2, 1, Buffer.from('0001', 'hex'))).acks, 1);
  // Only the head of a large frame: the header is enough.
  const head = produce(13, 9, 1).subarray(0, 20);
  assert.is(parseRequestHead(head).correlationId, 9);
  assert.equal(parseAddress('127.0.0.1:9092'), { host: '127.0.0.1', port: 9092 });
  assert.equal(parseAddress('[::1]:0'), { host: '::1', port: 0 });
  assert.equal(parseAddress(':19092'), { host: '127.0.0.1', port: 19092 });
  assert.throws(() => parseAddress('nohost'), /HOST:PORT/);
});

test.run();
