// Runs one benchmark client in this process and prints its metrics as one JSON line on stdout:
//   node dist/src/run-client.js kwire '{"bootstrap":"...","topic":"t","partitions":6,"records":100000}'
// Each client runs in a process of its own so that RSS, GC and CPU figures are its own.
import { runKwire, type KwireRunOptions } from './clients/kwire.js';

const [client, json] = process.argv.slice(2);
const options = JSON.parse(json ?? '{}') as KwireRunOptions;
const runners: Record<string, (o: KwireRunOptions) => Promise<unknown>> = { kwire: runKwire };
const runner = runners[client ?? ''];
if (!runner) {
  process.stderr.write(`unknown client ${client}; known: ${Object.keys(runners).join(', ')}\n`);
  process.exit(2);
}
const result = await runner(options);
process.stdout.write(`${JSON.stringify(result)}\n`);
