// Development script (not shipped): records test-fixtures/tcpdump-java-4.4.0/console, a tcpdump
// capture on the loopback interface of a Java 4.4.0 console consumer reading, in a classic group,
// ten keyed records that the console producer wrote before the capture started. Writes the pcap
// and its manifest (facts known from the scenario, not from our decoder).
//   KWIRE_BOOTSTRAP=127.0.0.1:PORT node packages/tools/scripts/capture-tcpdump.mjs   (or a broker of its own)
// Needs tcpdump (apt-get install tcpdump) and the right to capture (root or CAP_NET_RAW).
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { consoleConsumer, consoleProducer, createTopic, useKafka } from '@kwire/broker';

const out = fileURLToPath(new URL('../../../test-fixtures/tcpdump-java-4.4.0/console/', import.meta.url));
mkdirSync(out, { recursive: true });
const kafka = await useKafka({ log: (l) => console.error(`[broker] ${l}`) });
const port = kafka.bootstrap.slice(kafka.bootstrap.lastIndexOf(':') + 1);
const topic = 'tcpdump-t';
const group = 'tcpdump-g';
const records = Array.from({ length: 10 }, (_, i) => ({ key: `tcpdump-key-${i}`, value: `tcpdump value ${i}` }));
try {
  await createTopic(kafka, { topic, partitions: 3 });
  await consoleProducer(kafka, { topic, lines: records.map((r) => `${r.key}\t${r.value}`), parseKey: true });
  // -U: write each packet as it comes, so that stopping tcpdump loses nothing; -s 0: whole packets.
  const tcpdump = spawn('tcpdump', ['-i', 'lo', '-U', '-s', '0', '-w', `${out}console.pcap`, 'tcp', 'port', port], { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise((resolve, reject) => {
    tcpdump.on('error', reject);
    tcpdump.stderr.on('data', (d) => String(d).includes('listening on') && resolve(undefined));
  });
  const printed = await consoleConsumer(kafka, { topic, group, maxMessages: records.length });
  console.error(`the console consumer printed ${printed.length} records`);
  await new Promise((r) => setTimeout(r, 500));
  tcpdump.kill('SIGINT');
  await new Promise((r) => tcpdump.on('exit', r));
  const manifest = {
    scenario: 'tcpdump-java-4.4.0/console',
    description: 'tcpdump on lo while a Java 4.4.0 console consumer reads, in a classic group of one, the 10 keyed records the console producer wrote to a 3-partition topic before the capture began.',
    origin: 'peer',
    client: { name: 'apache-kafka-java', version: '4.4.0', tools: ['ConsoleConsumer'] },
    broker: { version: '4.4.0', nodes: 1 },
    capturedAt: new Date().toISOString(),
    facts: {
      clientSoftware: [{ name: 'apache-kafka-java', version: '4.4.0' }],
      topics: [{ name: topic, partitions: 3 }],
      records: [{ topic, count: records.length, records, fetched: 'all' }],
      groups: [{ groupId: group, protocol: 'classic', members: 1, topics: [topic] }],
    },
    notes: [`captured with: tcpdump -i lo -U -s 0 -w console.pcap tcp port ${port} (the broker's port; the conformance run finds the connections by their ApiVersions requests)`],
  };
  writeFileSync(`${out}manifest.json`, `${JSON.stringify(manifest, null, 2)}\n`);
} finally {
  await kafka.release();
}
