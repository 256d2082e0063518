// Seeded mutation fuzzing of the decoders. Valid frames of every API and version in scope (request
// and response frames, and the consumer-protocol data structures) are built from random bodies by
// the naive encoder, then mutated: bit flips, edge-value bytes, truncation, insertion, deletion,
// length fields inflated to huge values, duplicated slices. Every case must either decode or throw
// a KafkaProtocolError with a documented reason and an offset inside the input; anything else (a
// RangeError, a TypeError wrapped as a protocol error, a slow decode, a memory blow-up) fails.
//
// Reproduce a failure with the printed seed: KWIRE_FUZZ_SEED=<seed> (and KWIRE_FUZZ_CASES=<n> to
// change the number of cases). The failing input is printed in hex.
import { performance } from 'node:perf_hooks';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ConsumerProtocolAssignmentData,
  ConsumerProtocolSubscriptionData,
  decodeRequestFrame,
  decodeResponseFrame,
  encodeRequestFrame,
  encodeResponseFrame,
  isKafkaProtocolError,
  Reader,
  Writer,
  type ProtocolErrorReason,
} from '../../src/index.js';
import { hex } from './naive/compare.js';
import { type LengthMark, naiveEncodeWithMarks, naiveRequestFrame, naiveResponseFrame, uvarintBytes } from './naive/encoder.js';
import { randomBody, randomString, Rng } from './naive/random.js';
import { scopedMessages } from './naive/schema.js';

const SEED = Number(process.env['KWIRE_FUZZ_SEED'] ?? 0x00f0_22ed);
const CASES = Number(process.env['KWIRE_FUZZ_CASES'] ?? 200_000);
const BODIES_PER_VERSION = 4;
const VERBOSE = process.env['KWIRE_FUZZ_VERBOSE'] === '1';
/**
 * A decode slower than this fails, when it stays slower in the fastest of five tries and is also
 * more than SLOW_RATIO times the fastest of five decodes of its unmutated seed timed right after:
 * a busy machine (load 9 on 2 cores) made one 0.1 ms decode take 18 ms three times in a row, and
 * the seed's own decode, slow at the same moment, tells that from a decoder that loops on a
 * hostile count (thousands of times slower, whatever the load).
 */
const SLOW_MS = 5;
const SLOW_RATIO = 20;
/** The heap may not grow past this during the run (the inputs are all under a few KB). */
const HEAP_LIMIT = 384 * 1024 * 1024;
/** Nor may Buffer memory outside the heap (a decoder allocating from a hostile length). */
const EXTERNAL_LIMIT = 256 * 1024 * 1024;

const REASONS: readonly ProtocolErrorReason[] = [
  'truncated',
  'invalid-length',
  'varint-too-long',
  'invalid-value',
  'unsupported-version',
  'unknown-api',
  'crc-mismatch',
  'compression',
  'trailing-bytes',
];

interface Seed {
  label: string;
  bytes: Buffer;
  marks: LengthMark[];
  /** Has an int32 size prefix to fix up after a mutation. */
  framed: boolean;
  decode: (b: Buffer) => unknown;
  /** Encodes a decoded value again (undefined for the data structures). */
  reencode?: (decoded: unknown) => Buffer;
}

function corpus(): Seed[] {
  const rng = new Rng(SEED);
  const out: Seed[] = [];
  for (const s of scopedMessages()) {
    for (let v = s.min; v <= s.max; v++) {
      for (let i = 0; i < BODIES_PER_VERSION; i++) {
        const body = i === 0 ? {} : randomBody(rng, s.message, v, s.min, s.max);
        const label = `${s.message.name} v${v} #${i}`;
        if (s.kind === 'request') {
          const f = naiveRequestFrame(s.message, { apiVersion: v, correlationId: rng.int(0, 1000), clientId: rng.chance(0.2) ? null : randomString(rng), body });
          out.push({
            label,
            bytes: f.bytes,
            marks: f.marks,
            framed: true,
            decode: (b) => decodeRequestFrame(b),
            reencode: (d) => encodeRequestFrame(d as never),
          });
        } else if (s.kind === 'response') {
          const apiKey = s.apiKey!;
          // ApiVersions answers are decoded as the requested version, or v0 for UNSUPPORTED_VERSION.
          const bodyVersion = apiKey === 18 && (body as { errorCode?: number }).errorCode === 35 ? 0 : v;
          const f = naiveResponseFrame(s.message, { apiVersion: v, bodyVersion, correlationId: rng.int(0, 1000), body });
          out.push({
            label,
            bytes: f.bytes,
            marks: f.marks,
            framed: true,
            decode: (b) => decodeResponseFrame(apiKey, v, b),
            reencode: (d) => {
              const r = d as { correlationId: number; body: unknown; headerTaggedFields?: never };
              return encodeResponseFrame(apiKey, v, r.correlationId, r.body, undefined, r.headerTaggedFields);
            },
          });
        } else {
          const data = s.api === 'ConsumerProtocolSubscription' ? ConsumerProtocolSubscriptionData : ConsumerProtocolAssignmentData;
          const o = naiveEncodeWithMarks(s.message, v, body);
          out.push({
            label,
            bytes: o.bytes(),
            marks: o.marks,
            framed: false,
            decode: (b) => data.decode(new Reader(b), v),
            reencode: (d) => {
              const w = new Writer(256);
              data.encode(w, d as never, v);
              return w.finish();
            },
          });
        }
      }
    }
  }
  // ApiVersions UNSUPPORTED_VERSION answers to versions above the scope (read as v0).
  const avr = scopedMessages().find((s) => s.message.name === 'ApiVersionsResponse')!.message;
  for (const requested of [6, 9, 32767]) {
    const f = naiveResponseFrame(avr, { apiVersion: requested, bodyVersion: 0, correlationId: 5, body: { errorCode: 35, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }] } });
    out.push({ label: `ApiVersionsResponse (UNSUPPORTED_VERSION to v${requested})`, bytes: f.bytes, marks: f.marks, framed: true, decode: (b) => decodeResponseFrame(18, requested, b) });
  }
  return out;
}

// ------------------------------------------------------------------ mutations

const EDGE_BYTES = [0x00, 0x7f, 0x80, 0xff];

function splice(b: Buffer, at: number, remove: number, insert: Uint8Array): Buffer {
  return Buffer.concat([b.subarray(0, at), insert, b.subarray(at + remove)]);
}

function be(n: number, width: 2 | 4): Buffer {
  const b = Buffer.alloc(width);
  if (width === 2) b.writeInt16BE(n);
  else b.writeInt32BE(n);
  return b;
}

/** Sets a length or count field to a value that does not fit (or to an odd one). */
function inflate(rng: Rng, b: Buffer, m: LengthMark): [Buffer, string] {
  if (m.enc === 'int16') {
    const cur = b.readInt16BE(m.at);
    const n = rng.pick([0x7fff, 0x7ffe, -2, -32768, Math.min(0x7fff, cur + 1), Math.min(0x7fff, cur + rng.int(2, 100))]);
    return [splice(b, m.at, 2, be(n, 2)), `${m.role} int16 length at ${m.at}: ${cur} -> ${n}`];
  }
  if (m.enc === 'int32') {
    const cur = b.readInt32BE(m.at);
    const n = rng.pick([0x7fffffff, 0x7ffffffe, -2, -(2 ** 31), 0x10000000, 0x00ffffff, Math.min(0x7fffffff, cur + 1), Math.min(0x7fffffff, cur + rng.int(2, 1000))]);
    return [splice(b, m.at, 4, be(n, 4)), `${m.role} int32 length at ${m.at}: ${cur} -> ${n}`];
  }
  let cur = 0;
  let mult = 1;
  for (let i = 0; i < m.width; i++) {
    cur += (b[m.at + i]! & 0x7f) * mult;
    mult *= 128;
  }
  const n = rng.pick([2 ** 32 - 1, 2 ** 31, 2 ** 31 - 1, 2 ** 28, 2 ** 21, cur + 1, cur + rng.int(2, 1000), 0]);
  return [splice(b, m.at, m.width, uvarintBytes(Math.min(n, 2 ** 32 - 1))), `${m.role} uvarint at ${m.at}: ${cur} -> ${n}`];
}

function mutateOnce(rng: Rng, b: Buffer, seed: Seed, first: boolean): [Buffer, string] {
  const len = b.length;
  const pos = () => rng.int(0, Math.max(0, len - 1));
  const op = rng.int(0, 9);
  switch (op) {
    case 0: {
      const out = Buffer.from(b);
      const n = rng.int(1, 3);
      const where: number[] = [];
      for (let i = 0; i < n && len > 0; i++) {
        const p = pos();
        out[p]! ^= 1 << rng.int(0, 7);
        where.push(p);
      }
      return [out, `bit flip at ${where.join(',')}`];
    }
    case 1: {
      const out = Buffer.from(b);
      const n = rng.int(1, 4);
      const where: string[] = [];
      for (let i = 0; i < n && len > 0; i++) {
        const p = pos();
        out[p] = rng.pick(EDGE_BYTES);
        where.push(`${p}=${out[p]!.toString(16)}`);
      }
      return [out, `edge bytes ${where.join(',')}`];
    }
    case 2: {
      const k = rng.int(0, Math.max(0, len - 1));
      return [b.subarray(0, k), `truncated to ${k}`];
    }
    case 3: {
      const p = rng.int(0, len);
      const ins = rng.chance(0.5) ? rng.bytes(rng.int(1, 8)) : Buffer.from(Array.from({ length: rng.int(1, 8) }, () => rng.pick(EDGE_BYTES)));
      return [splice(b, p, 0, ins), `inserted ${hex(ins)} at ${p}`];
    }
    case 4: {
      const p = pos();
      const n = rng.int(1, 8);
      return [splice(b, p, n, Buffer.alloc(0)), `deleted ${n} at ${p}`];
    }
    case 5:
    case 6: {
      // Length fields of the original layout: only meaningful before anything moved.
      if (first && seed.marks.length > 0) return inflate(rng, b, rng.pick(seed.marks));
      const p = pos();
      const big = rng.pick([Buffer.from([0x7f, 0xff, 0xff, 0xff]), Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]), Buffer.from([0x80, 0x80, 0x80, 0x80, 0x08])]);
      return [splice(b, p, Math.min(big.length, len - p), big), `huge value ${hex(big)} at ${p}`];
    }
    case 7: {
      const a = pos();
      const n = rng.int(1, 24);
      const slice = Buffer.from(b.subarray(a, a + n));
      const at = rng.chance(0.5) ? Math.min(len, a + slice.length) : rng.int(0, len);
      return [splice(b, at, 0, slice), `duplicated [${a},${a + slice.length}) at ${at}`];
    }
    case 8: {
      // A whole random region.
      const out = Buffer.from(b);
      const p = pos();
      const n = Math.min(rng.int(1, 16), len - p);
      for (let i = 0; i < n; i++) out[p + i] = rng.int(0, 255);
      return [out, `random bytes [${p},${p + n})`];
    }
    default: {
      // The tail of a flexible struct: a tagged-field section with a huge tag or size.
      const p = pos();
      const ins = Buffer.concat([uvarintBytes(1), uvarintBytes(rng.pick([0, 1, 2, 3, 99, 2 ** 31])), uvarintBytes(rng.pick([0, 1, 2 ** 31, 2 ** 32 - 1]))]);
      return [splice(b, p, 0, ins), `tag section ${hex(ins)} inserted at ${p}`];
    }
  }
}

function mutate(rng: Rng, seed: Seed): [Buffer, string] {
  let b = seed.bytes;
  const steps: string[] = [];
  const n = rng.chance(0.7) ? 1 : rng.int(2, 3);
  for (let i = 0; i < n; i++) {
    const [next, desc] = mutateOnce(rng, b, seed, i === 0);
    b = next;
    steps.push(desc);
  }
  // Mostly keep the size prefix consistent, so that the mutation reaches the body decoder.
  if (seed.framed && b.length >= 4 && rng.chance(0.85)) {
    b = Buffer.from(b);
    b.writeInt32BE(b.length - 4, 0);
    steps.push('size fixed');
  }
  return [b, steps.join('; ')];
}

// ------------------------------------------------------------------ the run

interface Outcome {
  ok: boolean;
  problem?: string;
}

function judge(input: Buffer, run: () => unknown): Outcome & { decoded?: unknown } {
  try {
    return { ok: true, decoded: run() };
  } catch (e) {
    if (!isKafkaProtocolError(e)) return { ok: false, problem: `threw ${(e as Error)?.name ?? typeof e}: ${(e as Error)?.message ?? String(e)}\n${(e as Error)?.stack ?? ''}` };
    if (!REASONS.includes(e.reason)) return { ok: false, problem: `undocumented reason ${JSON.stringify(e.reason)}: ${e.message}` };
    if (e.offset !== undefined && !(Number.isInteger(e.offset) && e.offset >= 0 && e.offset <= input.length)) {
      return { ok: false, problem: `offset ${e.offset} outside the ${input.length}-byte input: ${e.message}` };
    }
    // toProtocolError wraps anything unexpected (a RangeError, a TypeError): that is a bug inside
    // the codec, only dressed as a protocol error.
    const cause = (e as { cause?: unknown }).cause;
    if (cause !== undefined && !isKafkaProtocolError(cause)) {
      return { ok: false, problem: `a ${(cause as Error)?.name} inside the decoder, wrapped as a protocol error: ${e.message}\n${(cause as Error)?.stack ?? ''}` };
    }
    return { ok: true };
  }
}

test(`fuzz: ${CASES} mutated frames decode or throw a typed KafkaProtocolError (seed 0x${SEED.toString(16)})`, () => {
  const seeds = corpus();
  const rng = new Rng(SEED ^ 0x9e3779b9);
  const failures: string[] = [];
  const stats = { decoded: 0, rejected: 0, reencoded: 0, refused: 0, slow: 0 };
  const reasons = new Map<string, number>();
  let maxHeap = 0;
  let maxExternal = 0;
  const started = performance.now();
  for (let i = 0; i < CASES; i++) {
    const seed = seeds[i % seeds.length]!;
    const [input, desc] = mutate(rng, seed);
    const t0 = performance.now();
    let outcome = judge(input, () => seed.decode(input));
    let ms = performance.now() - t0;
    if (ms > SLOW_MS) {
      // Twice more, keeping the fastest, to tell a GC pause or a first compilation from a slow decoder.
      stats.slow++;
      for (let k = 0; k < 4 && ms > SLOW_MS; k++) {
        const t1 = performance.now();
        outcome = judge(input, () => seed.decode(input));
        ms = Math.min(ms, performance.now() - t1);
      }
      if (ms > SLOW_MS) {
        let base = Infinity;
        for (let k = 0; k < 5; k++) {
          const t1 = performance.now();
          judge(seed.bytes, () => seed.decode(seed.bytes));
          base = Math.min(base, performance.now() - t1);
        }
        if (ms > SLOW_RATIO * base) outcome = { ok: false, problem: `decode took ${ms.toFixed(1)} ms (fastest of 5; its unmutated seed ${base.toFixed(2)} ms)` };
      }
    }
    if (outcome.ok && outcome.decoded !== undefined && seed.reencode) {
      stats.decoded++;
      // What decoded must encode, or be refused with a typed error (e.g. an unknown tag given twice
      // in the input); what it encodes to must decode, and encode to the same bytes again.
      let b1: Buffer | undefined;
      const enc = judge(input, () => (b1 = seed.reencode!(outcome.decoded)));
      if (!enc.ok) {
        outcome = { ok: false, problem: `re-encoding the decoded value: ${enc.problem}` };
      } else if (b1 === undefined) {
        stats.refused++;
        if (VERBOSE) {
          try {
            seed.reencode(outcome.decoded);
          } catch (e) {
            console.log(`  re-encode refused (${seed.label}; ${desc}): ${(e as Error).message}`);
          }
        }
      } else {
        try {
          const b2 = seed.reencode(seed.decode(b1));
          if (!b1.equals(b2)) outcome = { ok: false, problem: `re-encode is not stable:\n  ${hex(b1)}\n  ${hex(b2)}` };
          else stats.reencoded++;
        } catch (e) {
          outcome = { ok: false, problem: `the re-encoded bytes do not decode: ${(e as Error).message}\n  re-encoded: ${hex(b1)}` };
        }
      }
    } else if (outcome.ok && outcome.decoded !== undefined) {
      stats.decoded++;
    } else if (outcome.ok) {
      stats.rejected++;
    }
    if (!outcome.ok) {
      failures.push(`case ${i} (seed 0x${SEED.toString(16)}), ${seed.label}, mutation: ${desc}\n  ${outcome.problem}\n  input (${input.length} bytes): ${hex(input.subarray(0, 2048))}`);
      if (failures.length >= 20) break;
    }
    if (i % 2000 === 0) {
      const m = process.memoryUsage();
      maxHeap = Math.max(maxHeap, m.heapUsed);
      maxExternal = Math.max(maxExternal, m.external + m.arrayBuffers);
      if (m.heapUsed > HEAP_LIMIT || m.external > EXTERNAL_LIMIT) {
        failures.push(`case ${i}: memory grew to heap ${m.heapUsed} / external ${m.external} bytes (last mutation: ${seed.label}, ${desc})`);
        break;
      }
    }
  }
  const seconds = (performance.now() - started) / 1000;
  // Tally the reasons of a smaller sample, for the log.
  const sample = new Rng(SEED);
  for (let i = 0; i < 3000; i++) {
    const seed = seeds[i % seeds.length]!;
    const [input] = mutate(sample, seed);
    try {
      seed.decode(input);
      reasons.set('(decoded)', (reasons.get('(decoded)') ?? 0) + 1);
    } catch (e) {
      const r = isKafkaProtocolError(e) ? e.reason : 'OTHER';
      reasons.set(r, (reasons.get(r) ?? 0) + 1);
    }
  }
  console.log(
    `  fuzz: seed 0x${SEED.toString(16)}, ${CASES} cases over ${seeds.length} valid inputs in ${seconds.toFixed(2)} s (${Math.round(CASES / seconds)} cases/s); ` +
      `${stats.decoded} decoded (${stats.reencoded} re-encoded and stable, ${stats.refused} refused to re-encode), ${stats.rejected} rejected, ${stats.slow} re-timed; ` +
      `max heap ${(maxHeap / 1048576).toFixed(0)} MB, max external ${(maxExternal / 1048576).toFixed(0)} MB`,
  );
  console.log(`  fuzz: reasons in a 3000-case sample: ${[...reasons].map(([k, n]) => `${k} ${n}`).join(', ')}`);
  assert.ok(failures.length === 0, `${failures.length} failing case(s):\n${failures.slice(0, 5).join('\n---\n')}`);
  // Both outcomes must be common, or the mutations are too weak or too destructive to mean much.
  assert.ok(stats.decoded > CASES * 0.05, `only ${stats.decoded} mutated inputs decoded`);
  assert.ok(stats.rejected > CASES * 0.3, `only ${stats.rejected} mutated inputs were rejected`);
});

test('fuzz: the unmutated corpus decodes', () => {
  for (const s of corpus()) {
    try {
      s.decode(s.bytes);
    } catch (e) {
      assert.unreachable(`${s.label}: ${(e as Error).message}\n${hex(s.bytes)}`);
    }
  }
});

test.run();
