// The two C files of the addons (native/lz4.c, native/crc32c.c) compiled a second time, outside
// Node, with AddressSanitizer and UndefinedBehaviorSanitizer (native/sanitize/harness.c), and run
// over a corpus written here: LZ4 blocks of the fuzz payloads (made with lz4-napi), the LZ4 blocks
// of every lz4 batch in the captured fixtures, and the fixtures' stream files as raw hostile
// bytes, each mutated by the harness with a printed seed. Any out-of-bounds read or write,
// overflow or undefined shift aborts the harness with the sanitizer's report.
//
// Where no C compiler (or no sanitizer runtime) exists, the test says so in one line and passes:
// the addons are optional too (build.mjs), and the JavaScript decoders are fuzzed either way.
// Replay: KWIRE_FUZZ_SEED=<seed>; KWIRE_SANITIZE_MUTATIONS=<n> per block (default 300).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compressSync } from 'lz4-napi';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lz4FrameBound, lz4Implementations } from '../../src/compression/index.js';
import { Rng } from './naive/random.js';

const SEED = Number(process.env['KWIRE_FUZZ_SEED'] ?? 0x00f0_22ed);
const MUTATIONS = Number(process.env['KWIRE_SANITIZE_MUTATIONS'] ?? 300);
// dist/test/unit -> the package root
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const nativeDir = join(root, 'native');
const fixtures = join(root, '..', '..', 'test-fixtures');

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32LE(n, 0);
  return b;
}

const valid = (block: Buffer, decoded: Buffer) => Buffer.concat([u32(1), u32(block.length), block, u32(decoded.length), decoded]);
const raw = (bytes: Buffer) => Buffer.concat([u32(2), u32(bytes.length), bytes]);

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (name.endsWith('.bin')) out.push(p);
  }
  return out;
}

/** The compressed blocks of every LZ4 frame found in `bytes` (by its magic, checked by walking it). */
function lz4Blocks(bytes: Buffer): { block: Buffer; decoded?: Buffer }[] {
  const out: { block: Buffer; decoded?: Buffer }[] = [];
  for (let at = bytes.indexOf('\x04\x22\x4d\x18', 0, 'latin1'); at >= 0; at = bytes.indexOf('\x04\x22\x4d\x18', at + 4, 'latin1')) {
    // The frame's end is unknown here: try the lengths the walk accepts, growing.
    const flg = bytes[at + 4]!;
    let p = at + 7 + ((flg & 0x08) !== 0 ? 8 : 0);
    const blocks: Buffer[] = [];
    while (p + 4 <= bytes.length) {
      const word = bytes.readUInt32LE(p);
      p += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      if (p + size > bytes.length) break;
      if (word >>> 31 === 0) blocks.push(bytes.subarray(p, p + size));
      p += size + ((flg & 0x10) !== 0 ? 4 : 0);
    }
    const frame = bytes.subarray(at, p + ((flg & 0x04) !== 0 ? 4 : 0));
    try {
      lz4FrameBound(frame);
    } catch {
      continue;
    }
    if (blocks.length === 1) {
      const d = lz4Implementations.js!(frame, 64 * 1024 * 1024, null);
      out.push({ block: blocks[0]!, decoded: Buffer.from(d.buffer.subarray(0, d.length)) });
    } else {
      for (const block of blocks) out.push({ block });
    }
  }
  return out;
}

function corpus(): { bytes: Buffer; valid: number; raw: number; fixtureBlocks: number } {
  const rng = new Rng(SEED);
  const parts: Buffer[] = [];
  let validCount = 0;
  let rawCount = 0;
  const words = ['kafka', 'record', 'batch', 'offset', '{"id":', '}', ' ', 'aaaaaaaa', '\n'];
  for (let i = 0; i < 40; i++) {
    const n = i < 5 ? i : rng.int(1, 70_000);
    const chunks: Buffer[] = [];
    let len = 0;
    while (len < n) {
      const c = rng.chance(0.2) ? rng.bytes(rng.int(1, 64)) : Buffer.from(rng.pick(words).repeat(rng.int(1, 8)));
      chunks.push(c);
      len += c.length;
    }
    const data = Buffer.concat(chunks).subarray(0, n);
    // compressSync prepends the decoded size (u32le); the block follows.
    parts.push(valid(compressSync(data).subarray(4), data));
    validCount++;
  }
  let fixtureBlocks = 0;
  for (const f of files(fixtures)) {
    const bytes = readFileSync(f);
    for (const b of lz4Blocks(bytes)) {
      fixtureBlocks++;
      if (b.decoded) {
        parts.push(valid(b.block, b.decoded));
        validCount++;
      } else {
        parts.push(raw(b.block));
        rawCount++;
      }
    }
    parts.push(raw(bytes.subarray(0, 256 * 1024)));
    rawCount++;
  }
  return { bytes: Buffer.concat(parts), valid: validCount, raw: rawCount, fixtureBlocks };
}

test('native/lz4.c and native/crc32c.c under AddressSanitizer and UBSan, over the fuzz corpus and the fixtures', () => {
  const cc = process.env['CC'] ?? 'cc';
  const probe = spawnSync(cc, ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    console.log(`  native sanitizer harness: SKIPPED: no C compiler (${cc}) on this machine`);
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'kwire-sanitize-'));
  try {
    const exe = join(work, 'harness');
    const sanitize = join(nativeDir, 'sanitize');
    const t0 = performance.now();
    const build = spawnSync(
      cc,
      [
        '-std=c11',
        '-O1',
        '-g',
        '-Wall',
        '-Werror',
        '-fsanitize=address,undefined',
        '-fno-sanitize-recover=all',
        '-fno-omit-frame-pointer',
        '-I',
        sanitize,
        join(sanitize, 'harness.c'),
        join(sanitize, 'lz4-entry.c'),
        join(sanitize, 'crc32c-entry.c'),
        '-o',
        exe,
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    if (build.status !== 0) {
      const why = (build.stderr || String(build.error)).trim().split('\n');
      // A compiler without the sanitizer runtime cannot link; anything else is our bug.
      if (/cannot find -lasan|cannot find -lubsan|libasan|libubsan|unsupported option/.test(why.join('\n'))) {
        console.log(`  native sanitizer harness: SKIPPED: ${cc} has no AddressSanitizer/UBSan runtime (${why.at(-1)})`);
        return;
      }
      assert.unreachable(`the harness did not compile:\n${why.slice(-20).join('\n')}`);
    }
    const built = performance.now() - t0;
    const c = corpus();
    const file = join(work, 'corpus.bin');
    writeFileSync(file, c.bytes);
    const r = spawnSync(exe, [file, `0x${SEED.toString(16)}`, String(MUTATIONS)], {
      encoding: 'utf8',
      timeout: 300_000,
      // Leak checking needs ptrace, which containers often refuse; the harness frees what it takes anyway.
      env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=0:exitcode=86', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
    });
    const ran = performance.now() - t0 - built;
    assert.is(r.status, 0, `the harness failed (status ${r.status}, signal ${r.signal}):\n${(r.stderr || '').slice(-6000)}\n${r.stdout}`);
    const line = r.stdout.trim();
    console.log(
      `  ${line}; corpus ${c.valid} valid blocks (${c.fixtureBlocks} from fixture lz4 batches), ${c.raw} raw inputs; compiled in ${(built / 1000).toFixed(1)} s, ran in ${(ran / 1000).toFixed(1)} s`,
    );
    const m = /(\d+) lz4 decodes \((\d+) produced output\), (\d+) crc32c slices.*, 0 failures/.exec(line);
    assert.ok(m, line);
    assert.ok(Number(m![1]) > c.valid * MUTATIONS * 0.9, 'every block was mutated');
    assert.ok(Number(m![2]) >= c.valid, 'the valid blocks decoded');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test.run();
