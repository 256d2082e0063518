import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FrameSplitter, isKafkaProtocolError } from '../../src/index.js';

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

test.run();
