// The command line of the tools, both ways users reach it: `kwire-tools` (this package's bin) and
// `kwire` (@kwire/consumer's bin/kwire.js, which hands record, conformance and decode to this
// package): the dispatchers, `kwire conformance` over the committed fixtures (what CI runs, no
// broker), and the lifecycle of `kwire record`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const here = dirname(fileURLToPath(import.meta.url));
// dist/test/unit -> packages/tools/bin and packages/consumer/bin.
const BINS = { 'kwire-tools': resolve(here, '../../../bin/kwire-tools.js'), kwire: resolve(here, '../../../../consumer/bin/kwire.js') };
const fixtures = resolve(here, '../../../../../test-fixtures');
const tmp = mkdtempSync(join(tmpdir(), 'kwire-cli-'));

test.after(() => rmSync(tmp, { recursive: true, force: true }));

function run(bin: keyof typeof BINS, args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [BINS[bin], ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
const kwire = (...args: string[]) => run('kwire', args);
const kwireTools = (...args: string[]) => run('kwire-tools', args);

for (const bin of Object.keys(BINS) as (keyof typeof BINS)[]) {
  test(`the dispatcher of ${bin}: usage lists the commands; unknown commands are refused`, () => {
    const cli = (...args: string[]) => run(bin, args);
    const none = cli();
    assert.is(none.code, 2);
    assert.match(none.out, /kwire record|  record  /);
    assert.match(none.out, /conformance/);
    assert.match(none.out, /decode/);
    assert.is(cli('--help').code, 0);
    const unknown = cli('consume-everything');
    assert.is(unknown.code, 2);
    assert.match(unknown.err, /unknown command "consume-everything"/);
    assert.match(cli('conformance', '--help').out, /usage: kwire conformance DIR/);
    assert.match(cli('record', '--help').out, /usage: kwire record --target/);
    assert.is(cli('record').code, 2);
    assert.is(cli('conformance').code, 2);
    assert.is(cli('conformance', join(tmp, 'nowhere')).code, 2);
  });
}

test('kwire conformance test-fixtures: the table, full coverage, exit code 0 (kwire-tools; kwire for --markdown and --json)', () => {
  const r = kwireTools('conformance', fixtures);
  assert.is(r.code, 0, r.out + r.err);
  assert.match(r.out, /^API\s+v\s+frames\s+passed\s+failed\s+skipped\s+in scope\s+requests from$/m);
  assert.match(r.out, /67\/67 API versions passed as request and response, 8\/8 embedded structure versions \(full coverage required\)/);
  assert.match(r.out, /\nPASS\n$/);
  const md = kwire('conformance', fixtures, '--markdown');
  assert.match(md.out, /^\| API \| v \|/);
  const json = JSON.parse(kwire('conformance', join(fixtures, 'kwire', 'not-coordinator-3nodes'), '--json').out) as { ok: boolean; captures: unknown[] };
  assert.ok(json.ok);
  assert.is(json.captures.length, 1);
});

test('kwire conformance on a damaged capture: exit code 1 and the reason', () => {
  const dir = join(tmp, 'damaged');
  mkdirSync(dir);
  writeFileSync(join(dir, 'index.jsonl'), 'this is not json\n');
  const r = kwire('conformance', dir);
  assert.is(r.code, 1);
  assert.match(r.out, /damaged: index\.jsonl line 1: not JSON/);
  assert.match(r.out, /FAIL/);
});

test('kwire record: prints its address, stops on SIGINT, leaves a finished capture', async () => {
  const out = join(tmp, 'rec');
  // Nothing listens on the target: the proxy starts anyway and connections to it fail later.
  const child = spawn(process.execPath, [BINS.kwire, 'record', '--target', '127.0.0.1:1', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
  const address = await new Promise<string>((resolvePromise, reject) => {
    let buf = '';
    child.stdout!.on('data', (c) => {
      buf += c;
      if (buf.includes('\n')) resolvePromise(buf.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  assert.match(address, /^127\.0\.0\.1:\d+$/);
  child.kill('SIGINT');
  const code = await new Promise((r) => child.once('exit', r));
  assert.is(code, 0);
  const info = JSON.parse(readFileSync(join(out, 'capture.json'), 'utf8')) as { format: string; target: string; stoppedAt?: string; recorder: string };
  assert.is(info.format, 'kwire-capture');
  assert.is(info.target, '127.0.0.1:1');
  assert.ok(info.stoppedAt);
  assert.match(info.recorder, /^kwire record \d+\.\d+\.\d+/);
  assert.match(readFileSync(join(out, 'index.jsonl'), 'utf8'), /"type":"listener"/);
});

test.run();
