// `kwire-tools <command>`: the protocol tools of @kwire/tools. The same commands are reachable as
// `kwire record`, `kwire conformance` and `kwire decode` from @kwire/consumer's CLI when this
// package is installed.
const COMMANDS: Record<string, { summary: string; load: () => Promise<{ run(argv: string[]): Promise<number> }> }> = {
  record: { summary: 'a recording proxy between a Kafka client and a cluster: writes every request/response frame', load: () => import('./record.js') },
  decode: { summary: 'every Kafka frame of a capture folder or a pcap/pcapng file, as readable JSON lines', load: () => import('./decode.js') },
  conformance: { summary: 'decodes, re-encodes and compares every frame of capture folders and pcap/pcapng files', load: () => import('./conformance.js') },
};

function usage(): string {
  return `usage: kwire-tools <command> [options]     (kwire-tools <command> --help for its options)

${Object.entries(COMMANDS)
  .map(([n, c]) => `  ${n.padEnd(12)}${c.summary}`)
  .join('\n')}
`;
}

const [name, ...rest] = process.argv.slice(2);
try {
  if (name === undefined || name === '--help' || name === '-h') {
    process.stdout.write(usage());
    process.exitCode = name === undefined ? 2 : 0;
  } else if (!COMMANDS[name]) {
    process.stderr.write(`kwire-tools: unknown command "${name}"\n\n${usage()}`);
    process.exitCode = 2;
  } else {
    process.exitCode = await (await COMMANDS[name].load()).run(rest);
  }
} catch (err) {
  process.stderr.write(`kwire-tools: ${(err as Error).message ?? String(err)}\n`);
  process.exitCode = 1;
}
