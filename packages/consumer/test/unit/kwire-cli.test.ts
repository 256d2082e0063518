// The `kwire` command without @kwire/tools, as a user who installed @kwire/consumer alone has it:
// the package's bin and compiled sources copied into a node_modules of their own (so the workspace
// sibling packages/tools is not beside them), with @kwire/protocol linked. consume and perf are
// the package's own and answer; record, conformance and decode are @kwire/tools' and exit 1 with
// the message that says how to get them. (With @kwire/tools, they run from it: its record-cli test.)
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

// dist/test/unit -> packages/consumer, packages/protocol.
const consumerRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const protocolRoot = resolve(consumerRoot, '../protocol');
const tmp = mkdtempSync(join(tmpdir(), 'kwire-no-tools-'));
const installed = join(tmp, 'node_modules', '@kwire', 'consumer');

test.before(() => {
  mkdirSync(join(installed, 'dist'), { recursive: true });
  cpSync(join(consumerRoot, 'package.json'), join(installed, 'package.json'));
  cpSync(join(consumerRoot, 'bin'), join(installed, 'bin'), { recursive: true });
  cpSync(join(consumerRoot, 'dist', 'src'), join(installed, 'dist', 'src'), { recursive: true });
  symlinkSync(protocolRoot, join(tmp, 'node_modules', '@kwire', 'protocol'), 'dir');
});
test.after(() => rmSync(tmp, { recursive: true, force: true }));

function kwire(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [join(installed, 'bin', 'kwire.js'), ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test("the package's own commands answer", () => {
  const usage = kwire('--help');
  assert.is(usage.code, 0, usage.err);
  for (const name of ['consume', 'perf', 'record', 'conformance', 'decode']) assert.match(usage.out, new RegExp(`^  ${name} `, 'm'));
  assert.match(kwire('consume', '--help').out, /usage: kwire consume/);
  assert.match(kwire('perf', '--help').out, /usage: kwire perf/);
});

test('record, conformance and decode without @kwire/tools: exit 1 and how to get it', () => {
  for (const name of ['record', 'conformance', 'decode']) {
    const r = kwire(name, '--help');
    assert.is(r.code, 1, `${name}: ${r.out}${r.err}`);
    assert.is(r.out, '');
    assert.match(r.err, new RegExp(`^kwire: ${name}: this command is in @kwire/tools: install it next to @kwire/consumer \\(npm install @kwire/tools\\), or run its kwire-tools command\\n$`));
  }
});

test.run();
