// `--micro`'s suite (micro/suite.ts): every hot function measured once, briefly, one figure each.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const SUITE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'micro', 'suite.js');

test('the micro suite runs every benchmark and reports a positive median for each', () => {
  const r = spawnSync(process.execPath, [SUITE, '--rounds', '1', '--round-ms', '10', '--json'], { encoding: 'utf8', timeout: 120_000 });
  assert.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { results: { name: string; median: number; unit: string }[] };
  const names = out.results.map((x) => x.name);
  for (const n of ['frame-split', 'batch-scan', 'record-decode-100B', 'record-decode-1KB', 'varint', 'crc32c', 'decompress-lz4', 'decompress-zstd', 'decompress-snappy', 'decompress-gzip'])
    assert.ok(names.includes(n), n);
  for (const x of out.results) assert.ok(x.median > 0 && Number.isFinite(x.median), `${x.name}: ${x.median} ${x.unit}`);
});

test('perf report: the top symbols and the sample count of `perf report --stdio --sort dso,sym`', async () => {
  const { parsePerfReport } = await import('../../src/report/perf.js');
  const text = [
    "# Samples: 609  of event 'cpu-clock'",
    '# Overhead  Shared Object         Symbol',
    '#',
    '    81.44%  [JIT] tid 19785       [.] JS:* [eval]:1:1',
    "     5.00%  [JIT] tid 25577       [.] JS:*'readRecord file:///work/x/packages/protocol/dist/src/records/record-batch.js:491:20",
    '     0.66%  libc.so.6             [.] _int_free',
    '     0.50%  [kernel.kallsyms]     [k] copy_user_generic',
    '',
  ].join('\n');
  const r = parsePerfReport(text, 3);
  assert.is(r.samples, 609);
  assert.equal(r.top, [
    { percent: 81.44, dso: '[JIT]', symbol: 'JS:* [eval]:1:1' },
    { percent: 5, dso: '[JIT]', symbol: "JS:*'readRecord packages/protocol/dist/src/records/record-batch.js:491:20" },
    { percent: 0.66, dso: 'libc.so.6', symbol: '_int_free' },
  ]);
});
test.run();
