// `kwire conformance DIR|PCAP`: the conformance runner over capture folders and tcpdump files.
import { pathArgs } from './args.js';
import { formatMarkdownTable, formatReport } from '../conformance/table.js';
import { runToolsConformance } from '../conformance/inputs.js';

const USAGE = `usage: kwire conformance DIR|PCAP [--require-full-coverage] [--verbose] [--markdown] [--json] [--port P]...

Decodes every request and response frame of the captures under DIR (folders written by
\`kwire record\`, and pcap/pcapng files: TCP reassembled, Kafka connections found by port or by
an ApiVersions request first, connections joined mid-way read from their first provable frame
boundary), re-encodes each with kwire's codec (the whole protocol) and compares the bytes;
decodes the record batches of Fetch and Produce frames and the consumer protocol inside
JoinGroup/SyncGroup; checks the facts of each capture's manifest.json (for a pcap file, the
manifest.json beside it). Prints a table per API and version.

  --require-full-coverage  also fail unless every API/version of the consumer's scope passed
                           (default: what DIR/conformance.json says)
  --verbose                list every fact checked, not only failed ones
  --markdown               print the table as Markdown instead
  --json                   print the whole report as JSON instead
  --port P                 pcap: the broker port(s) (default 9092)

Exit code: 0 when everything passed, 1 on any failure, 2 for bad usage.
`;

export async function run(argv: string[]): Promise<number> {
  const args = pathArgs('conformance', argv, USAGE, {
    'require-full-coverage': { type: 'boolean' },
    verbose: { type: 'boolean' },
    markdown: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (typeof args === 'number') return args;
  const { values, path, ports } = args;
  const report = runToolsConformance(path, {
    ...(values['require-full-coverage'] ? { requireFullCoverage: true } : {}),
    ...(ports ? { ports } : {}),
  });
  if (values.json) process.stdout.write(`${JSON.stringify(report, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`);
  else if (values.markdown) process.stdout.write(formatMarkdownTable(report));
  else {
    for (const n of report.pcapNotes) process.stdout.write(`note: ${n}\n`);
    process.stdout.write(formatReport(report, { verbose: values.verbose }));
  }
  if (report.captures.length === 0) {
    process.stderr.write(`kwire conformance: no captures under ${path} (a capture is a folder with index.jsonl, or a .pcap/.pcapng file)\n`);
    return 1;
  }
  return report.ok ? 0 : 1;
}
