// `npm run chaos -- [--minutes N] [--seed S]... [--runs K] [--protocol classic|consumer]... [--concurrent]`:
// long chaos runs on a 3-node cluster of their own. Each run has its own seed (the --seed values,
// else KWIRE_CHAOS_SEED, else random ones) and protocol (alternating over --protocol, by default
// classic cooperative-sticky then KIP-848). --concurrent: every run in the concurrent mode
// (run({ maxConcurrency: 64, ordering: 'key' }), a handler of 0-20 ms; oracle rules (8)-(10)).
// Prints each run's summary; exits 1 if any failed.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startKafka } from '@kwire/broker';
import { CHAOS_BROKER_CONFIG, runChaos } from './harness.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '3' },
    seed: { type: 'string', multiple: true },
    runs: { type: 'string' },
    protocol: { type: 'string', multiple: true },
    quiet: { type: 'boolean' },
    concurrent: { type: 'boolean' },
  },
});
const minutes = Number(values.minutes);
if (!(minutes > 0)) throw new Error(`--minutes ${values.minutes}: a positive number of minutes`);
const fromEnv = process.env.KWIRE_CHAOS_SEED ? [process.env.KWIRE_CHAOS_SEED] : [];
let seeds = (values.seed ?? fromEnv).map((s) => {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new Error(`seed ${s}: an integer 0-4294967295`);
  return n;
});
const runs = values.runs ? Number(values.runs) : Math.max(1, seeds.length);
while (seeds.length < runs) seeds.push(Math.floor(Math.random() * 0x100000000));
seeds = seeds.slice(0, runs);
const protocols = (values.protocol ?? ['classic', 'consumer']) as ('classic' | 'consumer')[];
for (const p of protocols) if (p !== 'classic' && p !== 'consumer') throw new Error(`--protocol ${p}: classic or consumer`);

const log = (line: string) => process.stdout.write(`${line}\n`);
const dir = mkdtempSync(join(tmpdir(), 'kwire-chaos-'));
log(`chaos: ${runs} run(s), ${minutes} min of faults each, seeds ${seeds.join(' ')}; logs under ${dir}`);
const cluster = await startKafka({ nodes: 3, heapMb: 512, config: CHAOS_BROKER_CONFIG, log: values.quiet ? undefined : log });
const summaries: string[] = [];
let failed = 0;
try {
  for (let i = 0; i < runs; i++) {
    const r = await runChaos({
      cluster,
      seed: seeds[i]!,
      groupProtocol: protocols[i % protocols.length]!,
      concurrent: values.concurrent ?? false,
      faultMs: minutes * 60_000,
      dir,
      log: values.quiet ? undefined : log,
    });
    log(r.summary);
    summaries.push(r.summary);
    if (r.report.violations.length) failed++;
  }
} finally {
  await cluster.stop();
}
log(`\n${summaries.join('\n')}\n\nchaos: ${runs - failed} passed, ${failed} failed (replay one with KWIRE_CHAOS_SEED=<seed> or --seed)`);
process.exit(failed ? 1 : 0);
