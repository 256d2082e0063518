// Runs one benchmark client in this process and prints its report as one JSON line on stdout:
//   node dist/src/run-client.js kafkajs '{"bootstrap":"...","topic":"t","partitions":12,"records":100000,"mode":"throughput"}'
// Each client runs in a process of its own so that RSS, GC and CPU figures are its own. With an
// IPC channel (the orchestrator's spawn), group members and latency consumers also exchange
// ready/go/stop messages with it (see clients/common.ts).
//
// Steady state: with `measuredPasses`, the client reads the whole topic warmupPasses +
// measuredPasses times in this process, each pass with a consumer of its own (a fresh group for
// the clients that need one), and prints { passes: [report, ...] } with every pass marked
// warm-up or measured. Modules are loaded, code is compiled and the allocator is warm after the
// first pass: what a long-running consumer sees. Every client, the ceiling included, is measured
// this way; `warmupSeconds` makes the warm-up last that long too (passes.ts).
//
// `kwire` without a mode is the original multi-pass runner (runKwire: the memory test and the
// benchmark's RSS soak); with a mode it is kwireClient, like the others.
import type { ClientOptions, ClientReport } from './clients/common.js';
import { runPasses } from './passes.js';
import { holdHeap } from './service-heap.js';

type Runner = (o: ClientOptions) => Promise<unknown>;
const runners: Record<string, () => Promise<Runner>> = {
  kwire: async () => {
    const k = await import('./clients/kwire.js');
    return (o) => (o.mode ? k.kwireClient(o) : k.runKwire(o as never));
  },
  kafkajs: async () => (await import('./clients/kafkajs.js')).kafkajsClient,
  platformatic: async () => (await import('./clients/platformatic.js')).platformaticClient,
  ceiling: async () => (await import('./clients/ceiling.js')).ceilingClient,
  split: async () => (await import('./clients/split.js')).splitClient,
  'kwire-fairness': async () => (await import('./clients/kwire-fairness.js')).kwireFairnessClient,
  'kwire-share': async () => (await import('./clients/kwire-share.js')).kwireShareClient,
  rdkafka: async () => (await import('./clients/rdkafka.js')).rdkafkaClient,
  'kwire-kafkajs': async () => (await import('./clients/kwire-kafkajs.js')).kwireKafkajsClient,
  // The handler-bound family (scenarios/handler.ts).
  'handler-kwire': async () => (await import('./clients/handler-kwire.js')).kwireHandlerClient,
  'handler-kafkajs': async () => (await import('./clients/handler-kafkajs.js')).kafkajsHandlerClient,
  'handler-platformatic': async () => (await import('./clients/handler-platformatic.js')).platformaticHandlerClient,
};

const [client, json] = process.argv.slice(2);
const options = JSON.parse(json ?? '{}') as ClientOptions;
const load = runners[client ?? ''];
if (!load) {
  process.stderr.write(`unknown client ${client}; known: ${Object.keys(runners).join(', ')}\n`);
  process.exit(2);
}
const runner = await load();
// --heap-mib: the application's live heap, held from before the first pass to the end.
if (options.heapMiB) holdHeap(options.heapMiB);
if (options.measuredPasses) {
  const groupBase = options.groupId ?? `bench-${client}-${process.pid}-${Date.now().toString(36)}`;
  const passes = await runPasses({ ...options, measuredPasses: options.measuredPasses }, async (pass) => (await runner({ ...options, pass, groupId: `${groupBase}-p${pass}` })) as ClientReport);
  process.stdout.write(`${JSON.stringify({ passes })}\n`);
} else {
  const result = await runner(options);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
// Libraries may leave timers or sockets behind (kafkajs, platformatic): the report is out, so end.
process.exit(0);
