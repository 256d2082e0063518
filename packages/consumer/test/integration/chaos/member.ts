// One chaos group member, in a process of its own (the schedule kills, stops and terminates it).
// Options come as JSON in argv[2]. Everything it does goes to its own log, one line each, written
// with writeSync so that a line is in the file before the step it records is finished (a SIGKILL
// right after loses nothing that was written):
//   S <t> <pid>                 started
//   A <t> <p,p,...>             partitions assigned (from onPartitionsAssigned, before any fetch)
//   V <t> <p,p,...>             onPartitionsRevoked called (revocation under way, before its commit)
//   R <t> <p,p,...>             partitions revoked (after their commit: the end of ownership)
//   L <t> <p,p,...>             partitions lost
//   B <t> <p> <offset> <key>    a handler started (concurrent mode only), before its first await
//   P <t> <p> <offset>          a record processed: written BEFORE eachMessage resolves
//   C <t> <p> <offset> <fin>    a commit that succeeded (an interceptor's onCommit); <fin> is its
//                               metadata decoded: '-' (none), the finished offsets beyond <offset>
//                               as ranges 'a-b,c', or '!foreign' / '!corrupt:<why>'
//   X <t> <json>                close() resolved: its CloseResult, and when SIGTERM came
//   E <t> <message>             an error event (fatal, run() rejected)
//   G <t> <event> <json>        other group events (joined, rebalance, heartbeat-error, ...), for reading
// kwire's own log (info and up) goes to stderr.
// Concurrent mode (options.concurrent): run({ maxConcurrency, ordering: 'key' }) with a handler that
// waits 0-maxWaitMs at random (seeded per incarnation), so records of different keys finish out of
// order and the commit metadata carries finished records beyond the commit point.
// SIGTERM: close({ timeoutMs: 10_000 }), then exit.
import { closeSync, openSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { prng } from '@kwire/testkit';
import { consoleLogger, createConsumer, type GroupEventName, type TopicPartition } from '../../../src/index.js';
import { finishedField } from './oracle.js';

export interface MemberOptions {
  bootstrap: string;
  groupId: string;
  topic: string;
  groupProtocol: 'classic' | 'consumer';
  log: string;
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  closeTimeoutMs: number;
  /** Milliseconds each record takes (after its line is written); 0 in the chaos runs. */
  processMs?: number;
  /** The concurrent mode; absent: run({ eachMessage }) at its defaults (ordering 'partition'). */
  concurrent?: { maxConcurrency: number; maxWaitMs: number; seed: number };
}

const o = JSON.parse(process.argv[2]!) as MemberOptions;
const fd = openSync(o.log, 'a');
const line = (s: string) => writeSync(fd, `${s}\n`);
const parts = (tps: readonly TopicPartition[]) => (tps.length ? tps.map((tp) => tp.partition).join(',') : '-');

line(`S ${Date.now()} ${process.pid}`);
const consumer = createConsumer({
  bootstrapServers: o.bootstrap,
  clientId: `chaos-${process.pid}`,
  groupId: o.groupId,
  groupProtocol: o.groupProtocol,
  ...(o.groupProtocol === 'classic' ? { partitionAssignmentStrategy: ['cooperative-sticky'] } : {}),
  keyDeserializer: 'string',
  autoOffsetReset: 'earliest',
  sessionTimeoutMs: o.sessionTimeoutMs,
  heartbeatIntervalMs: o.heartbeatIntervalMs,
  // Concurrent mode: four commits a second, so that many land while a partition's head record still
  // runs with later ones finished (the metadata then carries them), for the aimed SIGKILL to find.
  autoCommitIntervalMs: o.concurrent ? 250 : 1_000,
  requestTimeoutMs: 10_000,
  fetchMaxWaitMs: 200,
  retryBackoffMs: 200,
  logger: consoleLogger('info'),
  interceptors: [
    {
      onCommit(offsets) {
        const t = Date.now();
        for (const c of offsets) line(`C ${t} ${c.partition} ${c.offset} ${finishedField(c.offset, c.metadata)}`);
      },
    },
  ],
});
consumer.on('revoked', (d) => line(`R ${Date.now()} ${parts(d.partitions as TopicPartition[])}`));
consumer.on('lost', (d) => line(`L ${Date.now()} ${parts(d.partitions as TopicPartition[])}`));
for (const ev of ['rebalance', 'joined', 'assigned', 'left', 'heartbeat-error', 'poll-interval-exceeded'] as GroupEventName[]) {
  consumer.on(ev, (d) => line(`G ${Date.now()} ${ev} ${JSON.stringify(d, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`));
}
consumer.on('fatal', (d) => line(`E ${Date.now()} fatal ${String(d.error)}`));

let closing = false;
process.on('SIGTERM', () => {
  if (closing) return;
  closing = true;
  const signalledAt = Date.now();
  void consumer.close({ timeoutMs: o.closeTimeoutMs }).then((r) => {
    line(`X ${Date.now()} ${JSON.stringify({ ...r, signalledAt }, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
    closeSync(fd);
    process.exit(0);
  });
});

await consumer.subscribe(
  { topics: [o.topic] },
  {
    onPartitionsAssigned: (tps) => void line(`A ${Date.now()} ${parts(tps)}`),
    onPartitionsRevoked: (tps) => void line(`V ${Date.now()} ${parts(tps)}`),
  },
);
const concurrent = o.concurrent;
const rnd = prng(concurrent?.seed ?? 0);
const run = concurrent
  ? consumer.run({
      maxConcurrency: concurrent.maxConcurrency,
      ordering: 'key',
      eachMessage: async ({ partition, message }) => {
        // Read before the first await: the record's bytes are the handler's only until it settles,
        // and the B line must be in the file before anything of the handler can run.
        line(`B ${Date.now()} ${partition} ${message.offset} ${String(message.key)}`);
        await sleep(Math.floor(rnd() * (concurrent.maxWaitMs + 1)));
        line(`P ${Date.now()} ${partition} ${message.offset}`);
      },
    })
  : consumer.run({
      eachMessage: async ({ partition, message }) => {
        line(`P ${Date.now()} ${partition} ${message.offset}`);
        if (o.processMs) await new Promise((r) => setTimeout(r, o.processMs));
      },
    });
await run.catch((err: unknown) => line(`E ${Date.now()} run ${String(err)}`));
