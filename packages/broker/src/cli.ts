import { parseArgs } from 'node:util';
import { startKafka } from './broker.js';
import { ensureKafka } from './distribution.js';
import { strayJvms } from './jvm.js';
import { probeApiVersions } from './probe.js';
import { consumerPerformance, createTopic, producerPerformance, type CompressionType } from './tools.js';
import { defaultKafkaVersion, NEWEST_KAFKA_VERSION } from './version.js';

const USAGE = `kwire-broker: a real Apache Kafka on loopback, assembled from Maven Central

  kwire-broker fetch [--version V]
      resolve the jars into .cache/kafka/V (default ${NEWEST_KAFKA_VERSION}, or KWIRE_KAFKA_VERSION)
  kwire-broker start [--version V] [--nodes 1|3] [--sasl] [--ssl] [--heap MB] [--set key=value]... [--keep]
      format and start a KRaft cluster on free ports; prints its addresses; Ctrl-C stops it
  kwire-broker api-versions --bootstrap HOST:PORT
  kwire-broker create-topic --bootstrap HOST:PORT --topic T [--partitions N] [--set key=value]...
  kwire-broker produce-perf --bootstrap HOST:PORT --topic T --num-records N --record-size S [--compression C]
  kwire-broker consume-perf --bootstrap HOST:PORT --topic T --num-records N
  kwire-broker strays [--kill]
      JVMs started by the launcher that are still running (from its pid files)
`;

const log = (line: string) => process.stderr.write(`[kwire-broker] ${line}\n`);

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      version: { type: 'string' },
      nodes: { type: 'string' },
      sasl: { type: 'boolean' },
      ssl: { type: 'boolean' },
      heap: { type: 'string' },
      set: { type: 'string', multiple: true },
      keep: { type: 'boolean' },
      bootstrap: { type: 'string' },
      topic: { type: 'string' },
      partitions: { type: 'string' },
      'num-records': { type: 'string' },
      'record-size': { type: 'string' },
      compression: { type: 'string' },
      kill: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const settings = Object.fromEntries(
    (values.set ?? []).map((kv) => {
      const i = kv.indexOf('=');
      if (i <= 0) throw new Error(`--set wants key=value, not ${kv}`);
      return [kv.slice(0, i), kv.slice(i + 1)];
    }),
  );
  const need = (name: keyof typeof values): string => {
    const v = values[name];
    if (typeof v !== 'string') throw new Error(`${command} needs --${name}`);
    return v;
  };
  const target = async () => ({ bootstrap: need('bootstrap'), dist: await ensureKafka(values.version ?? defaultKafkaVersion(), { log }) });

  switch (command) {
    case 'fetch': {
      const dist = await ensureKafka(values.version ?? defaultKafkaVersion(), { log });
      process.stdout.write(`${dist.libDir}\n`);
      return 0;
    }
    case 'start': {
      const nodes = values.nodes === undefined ? 1 : Number(values.nodes);
      if (nodes !== 1 && nodes !== 3) throw new Error('--nodes must be 1 or 3');
      const cluster = await startKafka({
        version: values.version,
        nodes,
        sasl: values.sasl,
        ssl: values.ssl,
        heapMb: values.heap === undefined ? undefined : Number(values.heap),
        config: settings,
        keepFiles: values.keep,
        log,
      });
      const info = {
        version: cluster.dist.version.text,
        clusterId: cluster.clusterId,
        bootstrap: cluster.bootstrap,
        sasl: cluster.sasl && { bootstrap: cluster.sasl.bootstrap, mechanisms: cluster.sasl.mechanisms, users: cluster.sasl.users.map((u) => u.username) },
        ssl: cluster.ssl && { bootstrap: cluster.ssl.bootstrap, caFile: cluster.ssl.caFile },
        nodes: cluster.nodes.map((n) => ({ nodeId: n.nodeId, pid: n.pid, port: n.port, logFile: n.logFile })),
        dir: cluster.dir,
      };
      process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
      log('running; Ctrl-C stops it');
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      log('stopping');
      await cluster.stop();
      return 0;
    }
    case 'api-versions': {
      const [host, port] = need('bootstrap').split(':');
      const ranges = await probeApiVersions(host!, Number(port));
      for (const r of ranges) process.stdout.write(`${r.apiKey}\t${r.minVersion}\t${r.maxVersion}\n`);
      return 0;
    }
    case 'create-topic': {
      await createTopic(await target(), { topic: need('topic'), partitions: Number(values.partitions ?? 1), config: settings });
      return 0;
    }
    case 'produce-perf': {
      const result = await producerPerformance(await target(), {
        topic: need('topic'),
        numRecords: Number(need('num-records')),
        recordSize: Number(need('record-size')),
        compression: (values.compression ?? 'none') as CompressionType,
      });
      process.stdout.write(`${result.summary}\n`);
      return 0;
    }
    case 'consume-perf': {
      const result = await consumerPerformance(await target(), { topic: need('topic'), messages: Number(need('num-records')) });
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return 0;
    }
    case 'strays': {
      const strays = strayJvms();
      for (const s of strays) {
        process.stdout.write(`${s.pid}\t${s.label}\t(started by pid ${s.owner})\n`);
        if (values.kill) process.kill(s.pid, 'SIGKILL');
      }
      return 0;
    }
    default:
      process.stdout.write(USAGE);
      return command === undefined || command === 'help' || values.help ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`kwire-broker: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
