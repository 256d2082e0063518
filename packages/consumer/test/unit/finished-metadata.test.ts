// The OffsetCommit metadata codec for finished offsets beyond the commit point (issue 31): round
// trips, the maxSpan bound at its edge, metadata of other clients, and corrupt strings (which must
// never read as offsets). Strings are also built by a naive second encoder below, bit by bit from
// the format's description, so the decoder is not only checked against its own encoder.
import { deflateRawSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { crc32c } from '@kwire/protocol';
import { prng } from '@kwire/testkit';
import { decodeFinished, DEFAULT_METADATA_MAX_BYTES, encodeFinished, FINISHED_METADATA_PREFIX, maxSpan } from '../../src/group/finished-metadata.js';

const MAX_OFFSET = (1n << 63n) - 1n;
/** maxSpan's cap: the largest span decoding accepts. */
const DECODE_LIMIT = maxSpan(64 * 1024);

/** `count` distinct offsets in (base, base + span], the highest being base + span. */
function scattered(seed: number, base: bigint, span: number, count: number): bigint[] {
  const random = prng(seed);
  const picked = new Set<number>([span]);
  while (picked.size < Math.min(count, span)) picked.add(1 + Math.floor(random() * span));
  return [...picked].sort((a, b) => a - b).map((r) => base + BigInt(r));
}

/** Each offset of (base, base + span] finished with probability `density`, base + span always. */
function bernoulli(seed: number, base: bigint, span: number, density: number): bigint[] {
  const random = prng(seed);
  const out: bigint[] = [];
  for (let r = 1; r < span; r++) if (random() < density) out.push(base + BigInt(r));
  out.push(base + BigInt(span));
  return out;
}

function range(base: bigint, from: number, to: number, step = 1): bigint[] {
  const out: bigint[] = [];
  for (let r = from; r <= to; r += step) out.push(base + BigInt(r));
  return out;
}

const formsSeen = new Set<string>();

function roundTrip(base: bigint, finished: bigint[], maxBytes = DEFAULT_METADATA_MAX_BYTES): string {
  const s = encodeFinished(base, finished, maxBytes);
  assert.ok(s !== null, 'an encoding');
  assert.ok(s.length <= maxBytes, `${s.length} <= ${maxBytes}`);
  assert.ok(/^[\x21-\x7e]+$/.test(s), 'printable ASCII');
  formsSeen.add(s[FINISHED_METADATA_PREFIX.length]!);
  const d = decodeFinished(s);
  if (d.kind !== 'finished') assert.unreachable(`decoded as ${JSON.stringify(d)}`);
  else {
    assert.is(d.base, base);
    assert.is(d.offsets.length, finished.length);
    assert.ok(
      d.offsets.every((o, i) => o === finished[i]),
      'the same offsets',
    );
  }
  return s;
}

// ---- a naive second encoder, from the format's description ----

function naiveCheck(head: string): string {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(crc32c(Buffer.from(head, 'ascii')));
  return b.toString('base64url');
}

/** Any form and payload bytes, with a correct check: for hostile strings as well as good ones. */
function naiveString(form: string, base: string, payload: Buffer | string): string {
  const head = `kw1${form}:${base}:${typeof payload === 'string' ? payload : payload.toString('base64url')}:`;
  return head + naiveCheck(head);
}

function naiveBitmap(base: bigint, finished: bigint[]): Buffer {
  const span = Number(finished[finished.length - 1]! - base);
  const set = new Set(finished);
  const bytes: number[] = [];
  for (let byte = 0; byte * 8 < span; byte++) {
    let v = 0;
    for (let bit = 0; bit < 8; bit++) if (set.has(base + BigInt(byte * 8 + bit + 1))) v += 2 ** bit;
    bytes.push(v);
  }
  return Buffer.from(bytes);
}

function naiveVarint(v: number): number[] {
  const out: number[] = [];
  do {
    out.push((v % 128) + (v >= 128 ? 128 : 0));
    v = Math.floor(v / 128);
  } while (v > 0);
  return out;
}

function naiveRunLengths(base: bigint, finished: bigint[]): Buffer {
  const highest = finished[finished.length - 1]!;
  const set = new Set(finished);
  const runs: number[] = []; // alternating unfinished, finished lengths
  let current = false;
  let length = 0;
  for (let o = base + 1n; o <= highest; o++) {
    const f = set.has(o);
    if (f !== current) {
      runs.push(length);
      current = f;
      length = 0;
    }
    length++;
  }
  runs.push(length);
  return Buffer.from(runs.flatMap((n, i) => naiveVarint(i === 0 ? n : n - 1)));
}

// ---- round trips ----

test('no finished offsets encode as null', () => {
  assert.is(encodeFinished(0n, []), null);
  assert.is(encodeFinished(MAX_OFFSET, []), null);
});

test('one finished offset, near and far', () => {
  for (const base of [0n, 41n, 1n << 62n, MAX_OFFSET - BigInt(DECODE_LIMIT)]) {
    for (const r of [1, 2, 8, 9, 1000, maxSpan(), DECODE_LIMIT]) roundTrip(base, [base + BigInt(r)]);
  }
  // The highest offset there is.
  roundTrip(MAX_OFFSET - 1n, [MAX_OFFSET]);
  roundTrip(MAX_OFFSET - 5000n, [MAX_OFFSET - 10n, MAX_OFFSET]);
});

test('dense: everything after the commit point finished, or all but a few', () => {
  const base = 1_000_000n;
  const all = range(base, 1, 20_000);
  assert.ok(roundTrip(base, all).length < 30, 'one run');
  const holes = all.filter((o) => (o - base) % 997n !== 0n);
  assert.ok(roundTrip(base, holes).length < 200);
});

test('sparse: a few finished offsets far apart', () => {
  const base = 7n;
  const s = roundTrip(base, [base + 3n, base + 5_000n, base + 12_345n, base + 20_000n]);
  assert.ok(s.length < 50, s);
  roundTrip(0n, scattered(1, 0n, 20_000, 10));
});

test('alternating finished and unfinished', () => {
  for (const base of [0n, MAX_OFFSET - 24_384n]) {
    roundTrip(base, range(base, 1, 1000, 2));
    roundTrip(base, range(base, 2, 1000, 2));
    roundTrip(base, range(base, 1, maxSpan(), 2));
  }
});

test('random sets at several sizes, base 0 and near 2^63', () => {
  let seed = 100;
  for (const span of [1, 7, 8, 9, 100, 1000, 5000, 20_000, maxSpan()]) {
    for (const count of [1, 2, 10, 64, 256, 1024, 5000, span]) {
      if (count > span) continue;
      for (const base of [0n, 1n << 40n, MAX_OFFSET - BigInt(span), MAX_OFFSET - BigInt(span) - 3n]) {
        roundTrip(base, scattered(seed++, base, span, count));
      }
    }
    for (const density of [0.01, 0.5, 0.97]) roundTrip(0n, bernoulli(seed++, 0n, span, density));
  }
});

test('the encoder writes all four forms, and the smallest', () => {
  for (const [base, finished] of [
    [0n, range(0n, 1, 3000, 2)],
    [0n, [5n, 6n, 7n, 300n]],
    [0n, bernoulli(3, 0n, 20_000, 0.5)],
    [0n, bernoulli(4, 0n, 20_000, 0.02)],
    [10n, range(10n, 1, 5000, 3)],
  ] as const) {
    const s = roundTrip(base, [...finished]);
    const bitmap = naiveBitmap(base, [...finished]);
    const rl = naiveRunLengths(base, [...finished]);
    const smallest = Math.min(bitmap.length, rl.length);
    const payloadChars = s.length - `kw1x:${base}::`.length - 6;
    assert.ok(payloadChars <= Math.ceil((4 * smallest) / 3), 'never larger than the smaller plain form');
  }
  assert.equal([...formsSeen].sort(), ['B', 'R', 'b', 'r']);
});

test("the naive encoder's strings decode to the same offsets, in every form", () => {
  let seed = 7;
  for (const span of [1, 8, 9, 63, 500, 3000]) {
    for (const base of [0n, 12_345n, MAX_OFFSET - BigInt(span)]) {
      for (const finished of [scattered(seed++, base, span, 1), scattered(seed++, base, span, Math.ceil(span / 3)), bernoulli(seed++, base, span, 0.9)]) {
        const bitmap = naiveBitmap(base, finished);
        const rl = naiveRunLengths(base, finished);
        for (const s of [
          naiveString('b', String(base), bitmap),
          naiveString('r', String(base), rl),
          naiveString('B', String(base), deflateRawSync(bitmap)),
          naiveString('R', String(base), deflateRawSync(rl)),
        ]) {
          assert.equal(decodeFinished(s), { kind: 'finished', base, offsets: finished }, s);
        }
      }
    }
  }
});

// ---- the bound ----

test('maxSpan: the values, and the header it leaves room for', () => {
  assert.is(maxSpan(), 24_384);
  assert.is(maxSpan(DEFAULT_METADATA_MAX_BYTES), 24_384);
  assert.is(maxSpan(32), 0);
  assert.is(maxSpan(0), 0);
  assert.is(maxSpan(34), 8);
  assert.is(DECODE_LIMIT, 393_024);
  assert.is(maxSpan(1 << 20), DECODE_LIMIT, 'capped at what decoding accepts');
  let previous = 0;
  for (let b = 0; b < 300; b++) {
    assert.ok(maxSpan(b) >= previous, 'monotone');
    previous = maxSpan(b);
  }
});

test('any set at exactly maxSpan fits, with the longest base', () => {
  let seed = 500;
  for (const maxBytes of [34, 40, 100, 1000, DEFAULT_METADATA_MAX_BYTES, 10_000, 64 * 1024]) {
    const span = maxSpan(maxBytes);
    const base = MAX_OFFSET - BigInt(span); // 19 digits
    assert.is(String(base).length, 19);
    const sets = [
      range(base, 1, span, 2), // alternating, the run lengths' worst case
      range(base, 2, span, 2),
      range(base, 1, span), // all
      [base + BigInt(span)], // only the last
      ...[0.05, 0.3, 0.5, 0.7, 0.95].map((d) => bernoulli(seed++, base, span, d)),
      scattered(seed++, base, span, Math.ceil(span / 10)),
    ];
    for (const finished of sets) roundTrip(base, finished, maxBytes);
  }
});

test('beyond maxSpan an incompressible set does not fit, and encoding says so', () => {
  const span = maxSpan() + 8; // one more bitmap byte
  const base = MAX_OFFSET - BigInt(span);
  const finished = bernoulli(9, base, span, 0.5);
  assert.throws(
    () => encodeFinished(base, finished),
    (e: unknown) => e instanceof RangeError && /beyond 4096/.test(e.message),
  );
  // A small base leaves room for the 18 digits it does not use.
  assert.ok(encodeFinished(0n, bernoulli(9, 0n, span, 0.5))!.length <= 4096);
  // Beyond what decoding accepts, nothing is written, whatever the room.
  assert.throws(() => encodeFinished(0n, [BigInt(DECODE_LIMIT) + 1n], 1 << 30), RangeError);
});

test('1,000 finished offsets scattered over a span of 20,000 stay under 4,096 bytes', () => {
  for (let seed = 1; seed <= 20; seed++) {
    for (const base of [0n, MAX_OFFSET - 20_000n]) {
      const s = roundTrip(base, scattered(seed, base, 20_000, 1000));
      assert.ok(s.length < 4096, `${s.length}`);
    }
  }
});

test('encoding refuses what is not a set of finished offsets after the base', () => {
  assert.throws(() => encodeFinished(-1n, [1n]), RangeError);
  assert.throws(() => encodeFinished(MAX_OFFSET + 1n, [MAX_OFFSET + 2n]), RangeError);
  assert.throws(() => encodeFinished(10n, [10n]), RangeError, 'the base is unfinished by definition');
  assert.throws(() => encodeFinished(10n, [9n, 11n]), RangeError);
  assert.throws(() => encodeFinished(10n, [12n, 12n]), RangeError);
  assert.throws(() => encodeFinished(10n, [13n, 12n]), RangeError);
  assert.throws(() => encodeFinished(10n, [11n, 1n << 62n, 20n]), RangeError);
  assert.throws(() => encodeFinished(MAX_OFFSET - 1n, [MAX_OFFSET + 1n]), RangeError);
});

// ---- metadata that is not ours ----

test('null, undefined and empty read as none; other clients read as foreign', () => {
  assert.equal(decodeFinished(null), { kind: 'none' });
  assert.equal(decodeFinished(undefined), { kind: 'none' });
  assert.equal(decodeFinished(''), { kind: 'none' }, "Java's OffsetAndMetadata default");
  for (const s of ['hello', ' ', 'kw', 'KW1b:0:AQ:xxxxxx', 'kw2b:0:AQ:xxxxxx', '{"kafkajs":true}', JSON.stringify({ finished: [1, 2, 3], v: 1 }), 'ÿkw1']) {
    assert.equal(decodeFinished(s), { kind: 'foreign' }, s);
  }
});

// ---- corrupt: never trusted ----

function assertCorrupt(s: string, reason?: RegExp): void {
  const d = decodeFinished(s);
  if (d.kind !== 'corrupt') assert.unreachable(`${s.slice(0, 80)} decoded as ${d.kind}`);
  else if (reason) assert.match(d.reason, reason);
}

test('a changed char anywhere is caught', () => {
  const good = [encodeFinished(1234n, [1236n, 1300n, 1301n])!, encodeFinished(MAX_OFFSET - 3000n, range(MAX_OFFSET - 3000n, 1, 3000, 2))!, encodeFinished(0n, bernoulli(2, 0n, 400, 0.5))!];
  const replacements = ['A', 'B', 'z', '0', '9', '-', '_', ':', '=', '+', ' ', 'é'];
  for (const s of good) {
    for (let i = 0; i < s.length; i++) {
      for (const c of replacements) {
        if (s[i] === c) continue;
        const bad = s.slice(0, i) + c + s.slice(i + 1);
        const kind = decodeFinished(bad).kind;
        // In the prefix it is no longer ours; anywhere else it is ours and corrupt.
        assert.is(kind, i < FINISHED_METADATA_PREFIX.length ? 'foreign' : 'corrupt', `${c} at ${i} of ${s}`);
      }
    }
  }
});

test('truncated or extended metadata is caught', () => {
  const s = encodeFinished(99n, bernoulli(5, 99n, 2000, 0.3))!;
  for (let n = 1; n < s.length; n++) {
    const kind = decodeFinished(s.slice(0, n)).kind;
    assert.is(kind, n < FINISHED_METADATA_PREFIX.length ? 'foreign' : 'corrupt', `${n} chars`);
  }
  for (const tail of ['A', ':', '\n', ':AAAAAA']) assertCorrupt(s + tail);
  assertCorrupt('kw1');
  assertCorrupt('kw1b');
  assertCorrupt('kw1:::');
});

test('a checksum that does not match', () => {
  const s = encodeFinished(5n, [7n, 8n])!;
  const check = s.slice(-6);
  const other = check[0] === 'A' ? 'B' : 'A';
  assertCorrupt(s.slice(0, -6) + other + check.slice(1), /checksum/);
  assertCorrupt(s.slice(0, -6) + check.slice(0, 5), /checksum/);
  // Stray bits in the check's last char: the same 4 bytes to a lenient decoder, not to ours.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const stray = alphabet[alphabet.indexOf(s[s.length - 1]!) ^ 1]!;
  assert.equal(Buffer.from(s.slice(-6, -1) + stray, 'base64url'), Buffer.from(check, 'base64url'));
  assertCorrupt(s.slice(0, -1) + stray, /checksum/);
});

test('bad base64url in the payload, with a correct checksum', () => {
  const payload = Buffer.from([0xfb, 0xff, 0x01]).toString('base64url'); // '-_8B'
  assert.equal(decodeFinished(naiveString('b', '0', payload)).kind, 'finished');
  assertCorrupt(naiveString('b', '0', '+/8B'), /base64url/); // the other alphabet
  assertCorrupt(naiveString('b', '0', '-_8B=='), /base64url/); // padding
  assertCorrupt(naiveString('b', '0', '-_8 B'), /base64url/);
  assertCorrupt(naiveString('b', '0', 'AQA'), /zero byte/); // [1, 0]: not canonical
  assertCorrupt(naiveString('b', '0', 'AR'), /canonical base64url/); // stray bits in the last char
  assertCorrupt(naiveString('b', '0', 'AQABA'), /canonical base64url/); // a length no encoder writes
  assertCorrupt(naiveString('b', '0', ''), /payload/);
});

test('bad bases and forms, with a correct checksum', () => {
  const bit = Buffer.from([1]);
  assert.equal(decodeFinished(naiveString('b', '9223372036854775806', bit)), { kind: 'finished', base: MAX_OFFSET - 1n, offsets: [MAX_OFFSET] });
  assertCorrupt(naiveString('b', '9223372036854775807', bit), /beyond 2\^63-1/);
  assertCorrupt(naiveString('b', '9223372036854775800', Buffer.from([0, 0x80])), /beyond 2\^63-1/);
  assertCorrupt(naiveString('b', '9223372036854775808', bit), /beyond 2\^63-1/);
  assertCorrupt(naiveString('b', '99999999999999999999', bit), /base/);
  for (const base of ['-1', '+1', '01', '00', '', '1e3', '0x10', ' 1', '１']) assertCorrupt(naiveString('b', base, bit), /base/);
  for (const form of ['x', 'z', '', 'bb', 'é']) assertCorrupt(naiveString(form, '0', bit), /form|separator/);
  assertCorrupt(naiveString('b', '0:1', bit), /separator/);
});

test('bad run lengths, with a correct checksum', () => {
  const rl = (...bytes: number[]) => naiveString('r', '0', Buffer.from(bytes));
  assert.equal(decodeFinished(rl(0, 0, 0, 1)), { kind: 'finished', base: 0n, offsets: [1n, 3n, 4n] });
  assertCorrupt(rl(0), /pair/); // ends with an unfinished run
  assertCorrupt(rl(0, 0, 0), /pair/);
  assertCorrupt(rl(0, 0x80), /cut short/);
  assertCorrupt(rl(0, 0x81, 0x00), /minimally/);
  assertCorrupt(rl(0, 0xff, 0xff, 0xff, 0x7f), /overflows/);
  assertCorrupt(rl(0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), /overflows/);
  // Runs that claim more offsets than anything we write: refused before they are materialized.
  assertCorrupt(rl(...naiveVarint(DECODE_LIMIT), 0), /span beyond/);
  assertCorrupt(rl(0, ...naiveVarint(DECODE_LIMIT)), /span beyond/);
  assert.equal(decodeFinished(rl(...naiveVarint(DECODE_LIMIT - 1), 0)).kind, 'finished');
  const many: number[] = [];
  for (let i = 0; i < 5; i++) many.push(...naiveVarint(DECODE_LIMIT / 4), 0x7f);
  assertCorrupt(rl(...many), /span beyond/);
  assertCorrupt(naiveString('r', '9223372036854775000', Buffer.from([...naiveVarint(900), 0])), /beyond 2\^63-1/);
});

test('an inflate bomb is refused at the size anything we write could need', () => {
  const bomb = deflateRawSync(Buffer.alloc(32 << 20, 0xff));
  assert.ok(bomb.length < 40_000, 'within the length decoding accepts');
  const started = process.hrtime.bigint();
  assertCorrupt(naiveString('B', '0', bomb), /inflates beyond/);
  assertCorrupt(naiveString('R', '0', deflateRawSync(Buffer.alloc(1 << 20, 0))), /inflates beyond/);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  assert.ok(ms < 500, `${ms} ms`);
  // Just at the limit it inflates, and just above it does not.
  const limit = DECODE_LIMIT / 8;
  assert.equal(decodeFinished(naiveString('B', '0', deflateRawSync(Buffer.alloc(limit, 0xff)))).kind, 'finished');
  assertCorrupt(naiveString('B', '0', deflateRawSync(Buffer.alloc(limit + 1, 0xff))), /inflates beyond/);
  assertCorrupt(naiveString('B', '0', Buffer.from('not deflate at all')), /does not inflate/);
  assertCorrupt(naiveString('B', '0', deflateRawSync(Buffer.from([1, 2, 3])).subarray(0, 2)), /does not inflate/);
  // Uncompressed, a payload that long is longer than any string we write.
  assertCorrupt(naiveString('b', '0', Buffer.alloc(limit + 1, 0xff)), /payload of/);
});

test.run();
