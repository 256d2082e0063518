// What the commands that read one PATH (decode, conformance) do alike with their arguments.
import { existsSync } from 'node:fs';

/** Bad usage: the parser's message and the usage on stderr; the exit code 2. */
export function usageError(command: string, err: unknown, usage: string): number {
  process.stderr.write(`kwire ${command}: ${(err as Error).message}\n\n${usage}`);
  return 2;
}

/**
 * The one PATH a command reads, or the exit code to end with: 0 after --help (the usage on
 * stdout), 2 for no path, more than one, or one that does not exist (said on stderr).
 */
export function onePath(command: string, help: boolean | undefined, positionals: readonly string[], usage: string): string | number {
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
export function brokerPorts(command: string, values: readonly string[] | undefined): number[] | undefined | 2 {
  const ports = values?.map(Number);
  if (ports?.some((p) => !(Number.isInteger(p) && p > 0 && p < 65536))) {
    process.stderr.write(`kwire ${command}: --port takes a TCP port (1-65535)\n`);
    return 2;
  }
  return ports;
}
