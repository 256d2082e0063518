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
// this way.
//
// `kwire` without a mode is the original multi-pass runner (runKwire: the memory test and the
// benchmark's RSS soak); with a mode it is kwireClient, like the others.
import type { ClientOptions, ClientReport } from './clients/common.js';

type Runner = (o: ClientOptions) => Promise<unknown>;
const runners: Record<string, () => Promise<Runner>> = {
  kwire: async () => {
    const k = await import('./clients/kwire.js');
    return (o) => (o.mode ? k.kwireClient(o) : k.runKwire(o as never));
  },
  kafkajs: async () => (await import('./clients/kafkajs.js')).kafkajsClient,
  platformatic: async () => (await import('./clients/platformatic.js')).platformaticClient,
  ceiling: async () => (await import('./clients/ceiling.js')).ceilingClient,
  'kwire-fairness': async () => (await import('./clients/kwire-fairness.js')).kwireFairnessClient,
  'kwire-share': async () => (await import('./clients/kwire-share.js')).kwireShareClient,
  rdkafka: async () => (await import('./clients/rdkafka.js')).rdkafkaClient,
};

export interface PassReport extends ClientReport {
  pass: number;
  warmup: boolean;
}

const [client, json] = process.argv.slice(2);
const options = JSON.parse(json ?? '{}') as ClientOptions;
const load = runners[client ?? ''];
if (!load) {
  process.stderr.write(`unknown client ${client}; known: ${Object.keys(runners).join(', ')}\n`);
  process.exit(2);
}
const runner = await load();
if (options.measuredPasses) {
  const warmup = options.warmupPasses ?? 1;
  const passes: PassReport[] = [];
  for (let pass = 0; pass < warmup + options.measuredPasses; pass++) {
    const r = (await runner({ ...options, pass, groupId: `${options.groupId ?? `bench-${client}-${process.pid}-${Date.now().toString(36)}`}-p${pass}` })) as ClientReport;
    passes.push({ ...r, pass, warmup: pass < warmup });
    // A pass that failed makes the later ones meaningless: stop there. (A share-group member reads
    // its part of the topic: the orchestrator checks the members' sum.)
    if (r.error || (options.mode !== 'share' && r.records !== options.records)) break;
  }
  process.stdout.write(`${JSON.stringify({ passes })}\n`);
} else {
  const result = await runner(options);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
// Libraries may leave timers or sockets behind (kafkajs, platformatic): the report is out, so end.
process.exit(0);
