// What the commands that read one PATH (decode, conformance) do alike with their arguments.
import { existsSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** parseArgs' options: name to { type, short, multiple }. */
type Options = NonNullable<ParseArgsConfig['options']>;

/** The options both commands take besides their own: the broker ports of a pcap file, and --help. */
const PATH_OPTIONS = {
  port: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The parsed option values of a PATH command with its own options O. */
type PathValues<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: O & typeof PATH_OPTIONS }>>['values'];

/**
 * A PATH command's arguments (its own `options`, and --port and --help): the values, the one PATH
 * and the broker ports; or the exit code to end with (0 after --help, 2 for bad usage, said on
 * stderr, see onePath() and brokerPorts()).
 */
export function pathArgs<const O extends Options>(command: string, argv: string[], usage: string, options: O): { values: PathValues<O>; path: string; ports: number[] | undefined } | number {
  let parsed: { values: unknown; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { ...options, ...PATH_OPTIONS } });
  } catch (err) {
    return usageError(command, err, usage);
  }
  const common = parsed.values as { port?: string[]; help?: boolean };
  const path = onePath(command, common.help, parsed.positionals, usage);
  if (typeof path === 'number') return path;
  const ports = brokerPorts(command, common.port);
  if (ports === 2) return 2;
  return { values: parsed.values as PathValues<O>, path, ports };
}

/** Bad usage: the parser's message and the usage on stderr; the exit code 2. */
function usageError(command: string, err: unknown, usage: string): number {
  process.stderr.write(`kwire ${command}: ${(err as Error).message}\n\n${usage}`);
  return 2;
}

/**
 * The one PATH a command reads, or the exit code to end with: 0 after --help (the usage on
 * stdout), 2 for no path, more than one, or one that does not exist (said on stderr).
 */
function onePath(command: string, help: boolean | undefined, positionals: readonly string[], usage: string): string | number {
  if (help) {
    process.stdout.write(usage);
    return 0;
  }
  if (positionals.length !== 1) {
    process.stderr.write(usage);
    return 2;
  }
  const path = positionals[0]!;
  if (!existsSync(path)) {
    process.stderr.write(`kwire ${command}: ${path} does not exist\n`);
    return 2;
  }
  return path;
}

/** --port values (pcap: the broker ports) as numbers, or 2 (said on stderr) when one is not a TCP port. */
function brokerPorts(command: string, values: readonly string[] | undefined): number[] | undefined | 2 {
  const ports = values?.map(Number);
  if (ports?.some((p) => !(Number.isInteger(p) && p > 0 && p < 65536))) {
    process.stderr.write(`kwire ${command}: --port takes a TCP port (1-65535)\n`);
    return 2;
  }
  return ports;
}
