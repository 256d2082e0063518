import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FrameSplitter, isKafkaProtocolError, type FrameSink } from '../../src/index.js';

/** size-prefixed frames with recognisable contents */
function frames(sizes: number[]): Buffer[] {
  return sizes.map((size, i) => {
    const f = Buffer.alloc(4 + size);
    f.writeInt32BE(size, 0);
    for (let j = 0; j < size; j++) f[4 + j] = (i * 31 + j) & 0xff;
    return f;
  });
}

function collect(splitter: FrameSplitter, chunks: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  // Copy each frame out: views are only valid as long as their chunk.
  for (const c of chunks) splitter.push(c, (f) => out.push(Buffer.from(f)));
  return out;
}

test('a stream cut at every byte offset (two pieces) yields the same frames', () => {
  const input = frames([0, 1, 5, 300, 2, 70_000, 4]);
  const stream = Buffer.concat(input);
  for (let cut = 0; cut <= stream.length; cut += cut < 400 ? 1 : 997) {
    const got = collect(new FrameSplitter(), [stream.subarray(0, cut), stream.subarray(cut)]);
    assert.is(got.length, input.length, `cut at ${cut}`);
    got.forEach((f, i) => assert.ok(f.equals(input[i]!), `frame ${i}, cut at ${cut}`));
  }
});

test('a stream fed one byte at a time, and in random pieces, yields the same frames', () => {
  const input = frames([3, 0, 17, 1000, 9]);
  const stream = Buffer.concat(input);
  const oneByOne: Buffer[] = [];
  for (let i = 0; i < stream.length; i++) oneByOne.push(stream.subarray(i, i + 1));
  assert.equal(collect(new FrameSplitter(), oneByOne), input);
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 50) + 1;
  for (let round = 0; round < 50; round++) {
    const pieces: Buffer[] = [];
    for (let o = 0; o < stream.length; ) {
      const n = rand();
      pieces.push(stream.subarray(o, o + n));
      o += n;
    }
    assert.equal(collect(new FrameSplitter(), pieces), input);
  }
});

test('a frame inside one chunk is a view of that chunk (no copy); a split frame is one exact-size buffer', () => {
  const [a, b] = frames([10, 20]);
  const chunk = Buffer.concat([a!, b!]);
  const seen: Buffer[] = [];
  const s = new FrameSplitter();
  s.push(chunk, (f) => seen.push(f));
  assert.is(seen.length, 2);
  assert.is(seen[0]!.buffer, chunk.buffer, 'view');
  assert.is(seen[0]!.byteOffset, chunk.byteOffset);
  const split: Buffer[] = [];
  s.push(b!.subarray(0, 7), (f) => split.push(f));
  assert.is(split.length, 0);
  assert.is(s.pending, 7);
  s.push(b!.subarray(7), (f) => split.push(f));
  assert.is(split.length, 1);
  assert.is(split[0]!.length, b!.length);
  assert.is(split[0]!.buffer.byteLength >= b!.length, true);
  assert.ok(split[0]!.equals(b!));
  assert.is(s.pending, 0);
});

test('a negative or oversized frame size is a KafkaProtocolError with the stream offset', () => {
  const bad = Buffer.from([0xff, 0xff, 0xff, 0xfe]);
  const ok = frames([2])[0]!;
  try {
    new FrameSplitter().push(Buffer.concat([ok, bad]), () => {});
    assert.unreachable();
  } catch (err) {
    assert.ok(isKafkaProtocolError(err));
    assert.is((err as { reason: string }).reason, 'invalid-length');
    assert.is((err as { offset: number }).offset, ok.length);
  }
  const big = Buffer.alloc(4);
  big.writeInt32BE(1_000_001);
  assert.throws(
    () => new FrameSplitter({ maxFrameBytes: 1_000_000 }).push(big, () => {}),
    (e: unknown) => isKafkaProtocolError(e) && /exceeds the limit/.test((e as Error).message),
  );
  // Split size prefix: the check still happens, offset still right.
  const s = new FrameSplitter({ maxFrameBytes: 1_000_000 });
  s.push(ok, () => {});
  s.push(big.subarray(0, 2), () => {});
  try {
    s.push(big.subarray(2), () => {});
    assert.unreachable();
  } catch (err) {
    assert.is((err as { offset: number }).offset, ok.length);
  }
});

/** Feeds `stream` in read mode the way a socket's onread does: into nextBuffer(), at most its length. */
function feedReads(s: FrameSplitter, stream: Buffer, pieces: number[]): void {
  let pos = 0;
  for (const piece of pieces) {
    let available = Math.min(piece, stream.length - pos);
    while (available > 0) {
      const target = s.nextBuffer();
      const n = Math.min(target.length, available);
      stream.copy(target, 0, pos, pos + n);
      s.onRead(n);
      pos += n;
      available -= n;
    }
  }
  assert.is(pos, stream.length);
}

interface Seen {
  admitted: [size: number, offset: number][];
  frames: { bytes: Buffer; owned: boolean; length: number; offset: number }[];
  allocations: number[];
}

function recorder(keep?: number): { sink: FrameSink; seen: Seen } {
  const seen: Seen = { admitted: [], frames: [], allocations: [] };
  let length = -1;
  let at = -1;
  return {
    seen,
    sink: {
      admit: (size, offset) => {
        seen.admitted.push([size, offset]);
        // frame() follows its admit() before the next admit(): the length and offset are this frame's.
        length = size + 4;
        at = offset;
        return keep;
      },
      allocate: (size) => (seen.allocations.push(size), Buffer.allocUnsafe(size + 3)),
      frame: (bytes, backing) => seen.frames.push({ bytes: Buffer.from(bytes), owned: backing !== undefined, length, offset: at }),
    },
  };
}

const SIZES = [0, 1, 5, 300, 2, 5000, 4, 1500, 3];

test('push() and onRead() see the same frames, each admitted exactly once at its stream offset, at every two-piece cut', () => {
  const input = frames(SIZES);
  const stream = Buffer.concat(input);
  const offsets: number[] = [];
  for (let o = 0, i = 0; i < input.length; o += input[i]!.length, i++) offsets.push(o);
  for (let cut = 0; cut <= stream.length; cut += cut < 600 ? 1 : 13) {
    for (const mode of ['push', 'read'] as const) {
      const { sink, seen } = recorder();
      const s = new FrameSplitter({ sink, readBufferBytes: 1024 });
      if (mode === 'push') {
        s.push(stream.subarray(0, cut));
        s.push(stream.subarray(cut));
      } else feedReads(s, stream, [cut, stream.length - cut]);
      const where = `${mode}, cut at ${cut}`;
      assert.equal(
        seen.admitted,
        SIZES.map((size, i) => [size, offsets[i]]),
        where,
      );
      assert.is(seen.frames.length, input.length, where);
      seen.frames.forEach((f, i) => {
        assert.ok(f.bytes.equals(input[i]!), `${where}: frame ${i}`);
        assert.is(f.length, input[i]!.length);
        assert.is(f.offset, offsets[i]);
      });
      assert.is(s.pending, 0, where);
    }
  }
});

test('read mode: frames up to the read buffer are views, larger ones one allocation each; push mode: only frames cut by a chunk allocate', () => {
  const input = frames([10, 1020, 1021, 4000]);
  const stream = Buffer.concat(input);
  const read = recorder();
  feedReads(new FrameSplitter({ sink: read.sink, readBufferBytes: 1024 }), stream, [stream.length]);
  assert.equal(
    read.seen.frames.map((f) => f.owned),
    [false, false, true, true],
  );
  assert.equal(read.seen.allocations, [1025, 4004]);
  const push = recorder();
  const s = new FrameSplitter({ sink: push.sink });
  s.push(stream.subarray(0, 20));
  s.push(stream.subarray(20));
  assert.equal(
    push.seen.frames.map((f) => f.owned),
    [false, true, false, false],
  );
  assert.equal(push.seen.allocations, [1024]);
});

test("a sink that keeps only each frame's head gets that head and the full length; the rest is never copied", () => {
  const input = frames([0, 3, 40, 200_000, 12, 70_000]);
  const stream = Buffer.concat(input);
  let seed = 5;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 9000) + 1;
  for (let round = 0; round < 30; round++) {
    const pieces: number[] = [];
    for (let o = 0; o < stream.length; ) {
      const n = round === 0 ? 1 + (o % 5) : rand();
      pieces.push(n);
      o += n;
    }
    for (const mode of ['push', 'read'] as const) {
      const { sink, seen } = recorder(16);
      const s = new FrameSplitter({ sink, readBufferBytes: 4096 });
      if (mode === 'push') for (let o = 0, i = 0; i < pieces.length; o += pieces[i]!, i++) s.push(stream.subarray(o, o + pieces[i]!));
      else feedReads(s, stream, pieces);
      const where = `${mode}, round ${round}`;
      assert.is(seen.frames.length, input.length, where);
      seen.frames.forEach((f, i) => {
        const whole = input[i]!;
        assert.ok(f.bytes.equals(whole.subarray(0, 16)), `${where}: head of frame ${i}`);
        assert.is(f.length, whole.length, `${where}: length of frame ${i}`);
      });
      assert.ok(
        seen.allocations.every((n) => n <= 16),
        `${where}: allocations ${seen.allocations.join(',')}`,
      );
      assert.is(s.stats.bytes, stream.length);
    }
  }
});

test('admitBytes: admit() waits for that many bytes of a frame (or all of a shorter one), once per frame, in both modes', () => {
  const input = frames([0, 3, 8, 9, 40, 2000, 5]);
  const stream = Buffer.concat(input);
  for (let cut = 0; cut <= stream.length; cut++) {
    for (const mode of ['push', 'read'] as const) {
      const heads: Buffer[] = [];
      const got: Buffer[] = [];
      const s = new FrameSplitter({
        admitBytes: 12,
        readBufferBytes: 1024,
        sink: {
          admit: (size, _offset, bytes, start, end) => {
            assert.ok(end - start >= Math.min(12, size + 4), `${mode}, cut at ${cut}: ${end - start} bytes at admit`);
            heads.push(Buffer.from(bytes.subarray(start, start + Math.min(12, size + 4))));
          },
          frame: (f) => got.push(Buffer.from(f)),
        },
      });
      if (mode === 'push') {
        s.push(stream.subarray(0, cut));
        s.push(stream.subarray(cut));
      } else feedReads(s, stream, [cut, stream.length - cut]);
      assert.equal(
        heads,
        input.map((f) => f.subarray(0, 12)),
        `${mode}, cut at ${cut}`,
      );
      assert.equal(got, input, `${mode}, cut at ${cut}`);
    }
  }
});

test('after a failure push() throws it again and onRead() refuses input; one splitter takes one mode', () => {
  const bad = Buffer.from([0xff, 0xff, 0xff, 0xfe]);
  const s = new FrameSplitter();
  assert.throws(() => s.push(bad, () => {}), /negative frame size/);
  assert.throws(() => s.push(frames([1])[0]!, () => {}), /negative frame size/);
  assert.ok(isKafkaProtocolError(s.error));
  const r = new FrameSplitter({ sink: { frame: () => {} } });
  r.push(frames([1])[0]!);
  assert.throws(() => r.nextBuffer() && r.onRead(1), /cannot also be fed/);
  const refusing = new FrameSplitter({
    readBufferBytes: 64,
    sink: {
      admit: (size) => {
        if (size > 10) throw new Error(`refused ${size}`);
      },
      frame: () => {},
    },
  });
  const big = frames([11])[0]!;
  big.copy(refusing.nextBuffer());
  assert.throws(() => refusing.onRead(big.length), /refused 11/);
  assert.is(refusing.onRead(1), false);
});

test.run();
