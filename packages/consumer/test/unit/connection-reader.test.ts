// The socket reader without a socket: `feed` plays Node's part exactly (read into the buffer the
// reader hands out, at most its length, then report the count), so every way a stream can be cut
// into reads is reproducible here.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isKafkaProtocolError } from '@kwire/protocol';
import { FrameReader, type FrameSink } from '../../src/connection/socket-reader.js';

/** Size-prefixed frames with recognisable contents. */
function frames(sizes: number[]): Buffer[] {
  return sizes.map((size, i) => {
    const f = Buffer.alloc(4 + size);
    f.writeInt32BE(size, 0);
    for (let j = 0; j < size; j++) f[4 + j] = (i * 31 + j * 7) & 0xff;
    return f;
  });
}

interface Got {
  frame: Buffer;
  owned: boolean;
}

function collector(): { sink: FrameSink; got: Got[]; allocations: number[] } {
  const got: Got[] = [];
  const allocations: number[] = [];
  return {
    got,
    allocations,
    sink: {
      // A little larger than asked, as a pool's size class would be.
      allocate: (size) => (allocations.push(size), Buffer.alloc(size + 13)),
      // Copy views: rule 1 says they die when this call returns.
      frame: (frame, backing) => got.push({ frame: backing ? frame : Buffer.from(frame), owned: backing !== undefined }),
    },
  };
}

/**
 * Delivers `stream` to the reader the way Node does: the kernel has `pieces` available one after
 * the other, and each read copies min(available, nextBuffer().length) bytes into the buffer the
 * reader handed out.
 */
function feed(reader: FrameReader, stream: Buffer, pieces: number[]): void {
  let pos = 0;
  for (const piece of pieces) {
    let available = Math.min(piece, stream.length - pos);
    while (available > 0) {
      const target = reader.nextBuffer();
      const n = Math.min(target.length, available);
      stream.copy(target, 0, pos, pos + n);
      reader.onRead(n);
      pos += n;
      available -= n;
    }
  }
  assert.is(pos, stream.length, 'the whole stream was fed');
}

const SIZES = [0, 1, 5, 300, 2, 5000, 4, 1500, 3];

test('a stream cut at every byte offset (two pieces) yields the same frames', () => {
  const input = frames(SIZES);
  const stream = Buffer.concat(input);
  for (let cut = 0; cut <= stream.length; cut++) {
    const { sink, got } = collector();
    // 1 KiB read buffer: the 1500 and 5000 byte frames are "large" and take the allocate path.
    const reader = new FrameReader(sink, { readBufferBytes: 1024 });
    feed(reader, stream, [cut, stream.length - cut]);
    assert.is(got.length, input.length, `cut at ${cut}`);
    got.forEach((g, i) => assert.ok(g.frame.equals(input[i]!), `frame ${i}, cut at ${cut}`));
    assert.is(reader.pendingBytes, 0);
  }
});

test('one byte per read, and random read sizes, yield the same frames', () => {
  const input = frames(SIZES);
  const stream = Buffer.concat(input);
  const { sink, got } = collector();
  feed(new FrameReader(sink, { readBufferBytes: 1024 }), stream, new Array(stream.length).fill(1));
  assert.equal(
    got.map((g) => g.frame),
    input,
  );
  let seed = 11;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 3000) + 1;
  for (let round = 0; round < 40; round++) {
    const pieces: number[] = [];
    for (let o = 0; o < stream.length; ) {
      const n = rand();
      pieces.push(n);
      o += n;
    }
    const c = collector();
    feed(new FrameReader(c.sink, { readBufferBytes: 1024 }), stream, pieces);
    assert.equal(
      c.got.map((g) => g.frame),
      input,
      `round ${round}`,
    );
  }
});

test('frames up to the read buffer size are views (no allocation); larger ones get exactly one allocation of their size', () => {
  const input = frames([10, 1020, 1021, 4000]);
  const stream = Buffer.concat(input);
  const { sink, got, allocations } = collector();
  feed(new FrameReader(sink, { readBufferBytes: 1024 }), stream, [stream.length]);
  // 10+4 and 1020+4 fit a 1 KiB buffer; 1021+4 and 4000+4 do not.
  assert.equal(
    got.map((g) => g.owned),
    [false, false, true, true],
  );
  assert.equal(allocations, [1025, 4004]);
  // The frame handed over is exactly its size, though the backing buffer is larger.
  assert.is(got[3]!.frame.length, 4004);
  assert.ok(got[3]!.frame.equals(input[3]!));
});

test('while much of a large frame is missing, reads go straight into the frame buffer', () => {
  const big = frames([200_000])[0]!;
  const small = frames([7])[0]!;
  const stream = Buffer.concat([small, big, small]);
  let backing: Buffer | undefined;
  const got: Buffer[] = [];
  const reader = new FrameReader(
    {
      allocate: (size) => (backing = Buffer.alloc(size)),
      frame: (frame, b) => got.push(b ? frame : Buffer.from(frame)),
    },
    { readBufferBytes: 65536 },
  );
  let directTargets = 0;
  let pos = 0;
  while (pos < stream.length) {
    const target = reader.nextBuffer();
    if (backing !== undefined && target.buffer === backing.buffer) {
      directTargets++;
      // The reader offers exactly the missing part of the frame, no more: a read into it can never
      // run into the next frame.
      assert.is(target.byteOffset - backing.byteOffset + target.length, big.length);
    }
    const n = Math.min(target.length, 8192, stream.length - pos);
    stream.copy(target, 0, pos, pos + n);
    reader.onRead(n);
    pos += n;
  }
  assert.is(got.length, 3);
  assert.ok(got[1]!.equals(big));
  assert.ok(got[2]!.equals(small));
  assert.ok(directTargets > 10, `direct reads: ${directTargets}`);
  assert.is(reader.stats.directReads, directTargets);
  assert.is(reader.stats.largeFrames, 1);
});

test('a negative or oversized frame size is a KafkaProtocolError with the stream offset; the reader then stops', () => {
  for (const [size, pattern] of [
    [-5, /negative frame size -5/],
    [2_000_000, /frame of 2000000 bytes exceeds the limit of 1048576/],
  ] as const) {
    const { sink } = collector();
    const reader = new FrameReader(sink, { maxFrameBytes: 1024 * 1024 });
    const ok = frames([3])[0]!;
    const bad = Buffer.alloc(8);
    bad.writeInt32BE(size, 0);
    const stream = Buffer.concat([ok, bad]);
    const target = reader.nextBuffer();
    stream.copy(target);
    let caught: unknown;
    try {
      reader.onRead(stream.length);
    } catch (err) {
      caught = err;
    }
    assert.ok(isKafkaProtocolError(caught), String(caught));
    assert.match((caught as Error).message, pattern);
    assert.is((caught as { offset: number }).offset, ok.length, 'offset of the bad size prefix in the stream');
    assert.is(reader.onRead(1), false, 'a failed reader refuses more input');
    assert.is(reader.error, caught);
  }
});

test('an error thrown by the sink stops the reader too (the stream is out of step)', () => {
  const reader = new FrameReader({
    allocate: (n) => Buffer.alloc(n),
    frame: () => {
      throw new Error('sink failed');
    },
  });
  const f = frames([1, 1]);
  const stream = Buffer.concat(f);
  stream.copy(reader.nextBuffer());
  assert.throws(() => reader.onRead(stream.length), /sink failed/);
  assert.is(reader.onRead(1), false);
});

test('a read delivered while the previous one is being handled is refused', () => {
  let reader!: FrameReader;
  let inner: unknown;
  reader = new FrameReader({
    allocate: (n) => Buffer.alloc(n),
    frame: () => {
      try {
        reader.onRead(1);
      } catch (err) {
        inner = err;
      }
    },
  });
  const f = frames([2])[0]!;
  f.copy(reader.nextBuffer());
  reader.onRead(f.length);
  assert.ok(isKafkaProtocolError(inner));
  assert.match((inner as Error).message, /while the previous one/);
});

test('abandon() hands back the buffer of a frame in progress', () => {
  let backing: Buffer | undefined;
  const reader = new FrameReader({ allocate: (n) => (backing = Buffer.alloc(n)), frame: () => {} }, { readBufferBytes: 1024 });
  const big = frames([5000])[0]!;
  big.copy(reader.nextBuffer(), 0, 0, 100);
  reader.onRead(100);
  assert.is(reader.pendingBytes, 100);
  assert.is(reader.abandon(), backing);
  assert.is(reader.onRead(1), false);
});

test.run();
