// `kwire conformance` of @kwire/tools over test-fixtures/: the recorded captures and the tcpdump
// capture of a Java console consumer session (test-fixtures/tcpdump-java-4.4.0/console), with the
// whole protocol; and the same pcap cut mid-connection, read from its first provable frames.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { formatReport } from '../../src/index.js';
import { conversationsFromPackets, decodeConversation, readPackets, runToolsConformance } from '../../src/index.js';
import { rawPcapFile } from './pcap-builder.js';

const fixtures = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../../test-fixtures');
const pcap = join(fixtures, 'tcpdump-java-4.4.0', 'console', 'console.pcap');

test('test-fixtures, the tcpdump capture included: every frame passes, every fact holds, the scope is covered', () => {
  const report = runToolsConformance(fixtures);
  assert.equal(
    report.failures.map((f) => `${f.capture} ${f.api} v${f.version}: ${f.message}`),
    [],
    formatReport(report),
  );
  assert.ok(report.ok && report.requireFullCoverage);
  assert.ok(report.coverage.every((c) => c.covered));
  const tcpdump = report.captures.find((c) => c.name === 'tcpdump-java-4.4.0/console/console.pcap')!;
  assert.ok(tcpdump, report.captures.map((c) => c.name).join(', '));
  assert.is(tcpdump.failed, 0);
  assert.is(tcpdump.skipped, 0);
  assert.ok(tcpdump.frames >= 100, `${tcpdump.frames} frames`);
  assert.ok(tcpdump.facts.length >= 5 && tcpdump.facts.every((f) => f.ok), JSON.stringify(tcpdump.facts));
  assert.equal(report.pcapNotes, []);
  // The only skipped frame of the whole folder: kwire's deliberate ApiVersions v99 request.
  assert.is(report.totals.skipped, 1);
});

test('the tcpdump capture cut mid-connection: read from the first provable frame boundary, frames before it counted as skipped', () => {
  const { packets } = readPackets(readFileSync(pcap));
  const full = conversationsFromPackets(packets, [], {});
  // The longest connection (the group coordinator's or the fetch one): cut the capture in its middle.
  const longest = full.conversations.reduce((a, b) => (b.requests.bytes.length + b.responses.bytes.length > a.requests.bytes.length + a.responses.bytes.length ? b : a));
  const fullFrames = [...decodeConversation(longest)];
  const times = longest.requests.times!;
  const cutTime = times[Math.floor(times.length / 2)]!.at + 0.0005;
  const t0 = Math.min(...packets.map((p) => p.at));
  const kept = packets.filter((p) => p.at - t0 > cutTime);
  // Joined mid-way there is no SYN and no ApiVersions first: the broker's port (--port) says it is Kafka.
  const brokerPort = Number(longest.broker.split(':').pop());
  assert.is(
    conversationsFromPackets(readPackets(rawPcapFile(kept, packets[0]!.linkType)).packets, [], {}).conversations.find((x) => x.client === longest.client),
    undefined,
  );
  const cut = conversationsFromPackets(readPackets(rawPcapFile(kept, packets[0]!.linkType)).packets, [], { ports: [brokerPort] });
  const c = cut.conversations.find((x) => x.client === longest.client)!;
  assert.ok(c, 'the cut connection is found by its broker port');
  assert.ok(c.skippedAtStart, 'marked as joined mid-way');
  const frames = [...decodeConversation(c)];
  assert.ok(frames.length > 0 && frames.length < fullFrames.length);
  assert.ok(
    frames.every((f) => f.error === undefined),
    frames
      .filter((f) => f.error)
      .map((f) => f.error)
      .join('\n'),
  );
  // Each decoded frame is one of the full capture's, same body.
  const key = (f: { direction: string; correlationId: number }) => `${f.direction}:${f.correlationId}`;
  const byKey = new Map(fullFrames.map((f) => [key(f), f]));
  for (const f of frames) assert.equal(f.body, byKey.get(key(f))?.body, key(f));
  const skipped = c.skippedAtStart!;
  assert.ok(skipped.requests + skipped.responses >= 1, JSON.stringify(skipped));

  // And through conformance: the cut capture passes (no manifest: its facts need the whole session).
  const dir = mkdtempSync(join(tmpdir(), 'kwire-cut-'));
  try {
    const file = join(dir, 'cut.pcap');
    writeFileSync(file, rawPcapFile(kept, packets[0]!.linkType));
    const report = runToolsConformance(file, { ports: [brokerPort] });
    assert.ok(report.ok, formatReport(report));
    assert.ok(
      report.pcapNotes.some((n) => /frame\(s\) before the first provable frame boundary skipped/.test(n)),
      report.pcapNotes.join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
