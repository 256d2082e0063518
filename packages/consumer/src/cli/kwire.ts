// `kwire <command> [options]`: the command-line tools shipped with the consumer package.
//
// Each command lives in its own module, loaded only when it runs, and exports `run(argv)`
// returning the exit code. To add one, add an entry to COMMANDS. consume and perf are this
// package's; record, conformance and decode are @kwire/tools' (which is built on this package, not
// the other way round), run from here when it is installed.
import { readFileSync } from 'node:fs';

export interface Command {
  /** One line for `kwire --help`. */
  summary: string;
  load: () => Promise<{ run(argv: string[]): Promise<number> }>;
}

const COMMANDS: Record<string, Command> = {
  consume: {
    summary: 'reads records and prints them (JSON lines, values, or a count), from partitions or as a group member',
    load: () => import('./consume.js'),
  },
  record: {
    summary: 'a recording proxy between a Kafka client and a cluster: writes every request/response frame (from @kwire/tools)',
    load: () => toolCommand('record'),
  },
  perf: {
    summary: "measures kwire's throughput and latency on a topic of your cluster (the ConsumerPerformance of kwire)",
    load: () => import('./perf.js'),
  },
  conformance: {
    summary: 'decodes, re-encodes and compares every frame of captures written by `kwire record` and of pcap/pcapng files (from @kwire/tools)',
    load: () => toolCommand('conformance'),
  },
  decode: {
    summary: 'every Kafka frame of a capture or a pcap/pcapng file as readable JSON lines (from @kwire/tools)',
    load: () => toolCommand('decode'),
  },
};

/** A command of @kwire/tools, or the error that says how to get it. */
async function toolCommand(name: 'record' | 'conformance' | 'decode'): Promise<{ run(argv: string[]): Promise<number> }> {
  const { loadToolCommand, TOOLS_MISSING } = await import('./tools.js');
  const command = await loadToolCommand(name);
  if (!command) throw new Error(`${name}: ${TOOLS_MISSING}`);
  return command;
}

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `kwire ${version()}: a Kafka consumer for Node.js, and tools for the Kafka wire protocol

usage: kwire <command> [options]     (kwire <command> --help for its options)

${lines.join('\n')}
`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    const near = Object.keys(COMMANDS).find((c) => c.startsWith(name) || name.startsWith(c));
    process.stderr.write(`kwire: unknown command "${name}"${near ? ` (did you mean ${near}?)` : ''}; run 'kwire --help' for the commands\n`);
    return 2;
  }
  const mod = await command.load();
  return mod.run(rest);
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`kwire: ${(err as Error).message ?? String(err)}\n`);
  process.exitCode = 1;
}
