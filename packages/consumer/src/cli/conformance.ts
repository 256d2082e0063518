// `kwire conformance DIR`: the conformance runner of @kwire/protocol over capture folders.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatMarkdownTable, formatReport, runConformance } from '@kwire/protocol';

const USAGE = `usage: kwire conformance DIR [--require-full-coverage] [--verbose] [--markdown] [--json]

Decodes every request and response frame of the captures under DIR (folders written by
\`kwire record\`), re-encodes each with kwire's codec and compares the bytes; decodes the record
batches of Fetch and Produce frames and the consumer protocol inside JoinGroup/SyncGroup; checks
the facts of each capture's manifest.json. Prints a table per API and version. Every API and
version of Kafka 4.4's schemas is decoded (the whole protocol, @kwire/protocol/all-apis, not only
the consumer's APIs); anything outside them is counted as skipped. The coverage requirement is the
consumer's scope.

  --require-full-coverage  also fail unless every API/version of the codec's scope passed
                           (default: what DIR/conformance.json says)
  --verbose                list every fact checked, not only failed ones
  --markdown               print the table as Markdown instead
  --json                   print the whole report as JSON instead

Exit code: 0 when everything passed, 1 on any failure, 2 for bad usage.
`;

export async function run(argv: string[]): Promise<number> {
  // With @kwire/tools installed, its conformance command (the same runner, plus pcap/pcapng input)
  // answers; without it, capture folders only.
  const tools = await (await import('./tools.js')).loadToolCommand('conformance');
  if (tools) return tools.run(argv);
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'require-full-coverage': { type: 'boolean' },
      verbose: { type: 'boolean' },
      markdown: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length !== 1) {
    process.stderr.write(USAGE);
    return 2;
  }
  const dir = positionals[0]!;
  if (!existsSync(dir)) {
    process.stderr.write(`kwire conformance: ${dir} does not exist\n`);
    return 2;
  }
  // Loaded here only: the consumer itself never imports the whole protocol.
  const { ALL_API_DEFINITIONS } = await import('@kwire/protocol/all-apis');
  const report = runConformance(dir, { definitions: ALL_API_DEFINITIONS, ...(values['require-full-coverage'] ? { requireFullCoverage: true } : {}) });
  if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else if (values.markdown) process.stdout.write(formatMarkdownTable(report));
  else process.stdout.write(formatReport(report, { verbose: values.verbose }));
  if (report.captures.length === 0) {
    process.stderr.write(`kwire conformance: no captures under ${dir} (a capture is a folder with index.jsonl)\n`);
    return 1;
  }
  return report.ok ? 0 : 1;
}
