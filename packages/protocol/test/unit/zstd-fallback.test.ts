// Issue 13 item 6: @kwire/protocol loads and decodes uncompressed, gzip, snappy and lz4 batches
// where the zstd-napi addon is missing; zstd then comes from Node's own zlib (Node 22.15+) or is a
// clear error naming the codec. The addon's absence is staged in a child process (a preload that
// makes resolving zstd-napi fail), under whichever Node runs this suite (20 and 24 in npm test).
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as zlib from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeRecordBatch } from '../../src/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const preload = join(here, '../../../test/unit/fixtures/block-zstd.cjs');
const protocol = join(here, '../../src/index.js');

test('without the zstd addon: the package loads, four codecs decode, zstd uses node:zlib or says what is missing', () => {
  const records = Array.from({ length: 50 }, (_, i) => ({ value: `value ${i} `.repeat(20) }));
  const batches = Object.fromEntries((['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const).map((c) => [c, encodeRecordBatch(records, { compression: c }).toString('base64')]));
  const script = `
    const { decodeRecordBatch, zstdBackend } = await import(${JSON.stringify(protocol)});
    const batches = ${JSON.stringify(batches)};
    const out = { backend: zstdBackend().kind };
    for (const [codec, b64] of Object.entries(batches)) {
      try {
        const batch = decodeRecordBatch(Buffer.from(b64, 'base64'));
        out[codec] = batch.records().length + ' ' + batch.records()[49].valueString().slice(0, 8);
      } catch (err) {
        out[codec] = 'error: ' + err.message;
      }
    }
    process.stdout.write(JSON.stringify(out));
  `;
  const out = JSON.parse(execFileSync(process.execPath, ['--require', preload, '--input-type=module', '-e', script], { encoding: 'utf8' })) as Record<string, string>;
  for (const codec of ['none', 'gzip', 'snappy', 'lz4']) assert.is(out[codec], '50 value 49', codec);
  if (typeof (zlib as unknown as { zstdDecompressSync?: unknown }).zstdDecompressSync === 'function') {
    assert.is(out.backend, 'node');
    assert.is(out.zstd, '50 value 49', "zstd through Node's own zlib");
  } else {
    assert.is(out.backend, 'none');
    assert.match(out.zstd!, /^error: .*zstd: no decoder here \(the zstd-napi addon did not load: .*blocked.*\).*reinstall so that zstd-napi builds, or run Node 22\.15\+/);
  }
});

test.run();
