import { createServer, type Server, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { freePorts, probeApiVersions } from '../../src/index.js';

/** A TCP server that answers whatever arrives with `reply(requestBytes)`, in pieces of `chunk` bytes. */
async function fakeBroker(reply: (request: Buffer, socket: Socket) => void): Promise<{ port: number; server: Server }> {
  const server = createServer((socket) => {
    let got = Buffer.alloc(0);
    socket.on('data', (c: Buffer) => {
      got = Buffer.concat([got, c]);
      if (got.length >= 4 && got.length >= 4 + got.readInt32BE(0)) reply(got, socket);
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, server };
}

function apiVersionsV0Answer(correlationId: number, errorCode: number, ranges: [number, number, number][]): Buffer {
  const body = Buffer.alloc(4 + 2 + 4 + ranges.length * 6);
  let o = body.writeInt32BE(correlationId, 0);
  o = body.writeInt16BE(errorCode, o);
  o = body.writeInt32BE(ranges.length, o);
  for (const [k, min, max] of ranges) {
    o = body.writeInt16BE(k, o);
    o = body.writeInt16BE(min, o);
    o = body.writeInt16BE(max, o);
  }
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

test('the probe sends a well-formed ApiVersions v0 request and reads the ranges, even one byte at a time', async () => {
  let seen: Buffer | undefined;
  const { port, server } = await fakeBroker((request, socket) => {
    seen = request;
    const answer = apiVersionsV0Answer(request.readInt32BE(8), 0, [
      [18, 0, 4],
      [1, 4, 17],
    ]);
    // Dribble the answer out byte by byte: the probe must reassemble it.
    let i = 0;
    const drip = () => {
      if (i < answer.length) socket.write(answer.subarray(i, ++i), () => setImmediate(drip));
    };
    drip();
  });
  try {
    const ranges = await probeApiVersions('127.0.0.1', port);
    assert.equal(ranges, [
      { apiKey: 18, minVersion: 0, maxVersion: 4 },
      { apiKey: 1, minVersion: 4, maxVersion: 17 },
    ]);
    assert.ok(seen);
    assert.is(seen!.readInt32BE(0), seen!.length - 4, 'size prefix counts the bytes after itself');
    assert.is(seen!.readInt16BE(4), 18, 'api key');
    assert.is(seen!.readInt16BE(6), 0, 'api version');
    const idLength = seen!.readInt16BE(12);
    assert.is(seen!.subarray(14, 14 + idLength).toString(), 'kwire-broker-probe');
  } finally {
    server.close();
  }
});

test('the probe rejects an error answer, a wrong correlation id and a non-Kafka answer', async () => {
  const cases: [(req: Buffer) => Buffer, RegExp][] = [
    [(req) => apiVersionsV0Answer(req.readInt32BE(8), 35, []), /error code 35/],
    [(req) => apiVersionsV0Answer(req.readInt32BE(8) + 1, 0, []), /wrong correlation id/],
    [() => Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n'), /not a Kafka ApiVersions response/],
  ];
  for (const [answer, expected] of cases) {
    const { port, server } = await fakeBroker((request, socket) => socket.write(answer(request)));
    try {
      await probeApiVersions('127.0.0.1', port).then(
        () => assert.unreachable('should have failed'),
        (err: Error) => assert.match(err.message, expected),
      );
    } finally {
      server.close();
    }
  }
});

test('the probe times out on a silent peer and fails fast on a closed port', async () => {
  const { port, server } = await fakeBroker(() => {});
  try {
    const started = Date.now();
    await probeApiVersions('127.0.0.1', port, 300).then(
      () => assert.unreachable('should have timed out'),
      (err: Error) => assert.match(err.message, /no ApiVersions answer/),
    );
    assert.ok(Date.now() - started < 2_000);
  } finally {
    server.close();
  }
  const [closed] = await freePorts(1);
  await probeApiVersions('127.0.0.1', closed!, 2_000).then(
    () => assert.unreachable('should have failed'),
    (err: NodeJS.ErrnoException) => assert.is(err.code, 'ECONNREFUSED'),
  );
});

test('freePorts returns distinct bindable ports', async () => {
  const ports = await freePorts(8);
  assert.is(new Set(ports).size, 8);
  for (const p of ports) assert.ok(p > 0 && p < 65536);
});

test.run();
