import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KafkaDistribution } from './distribution.js';
import { BrokerError } from './errors.js';
import { spawnJava } from './jvm.js';
import { cacheDir } from './paths.js';
import { atLeast } from './version.js';

/**
 * Kafka's own Java tools, run from the same jars as the broker: the real peers for loading data
 * and for the Java baseline. Each run pays a JVM start (1-2 s on 2 cores).
 */

/** Where the tools connect: a cluster started by startKafka, or any broker plus a distribution. */
export interface KafkaTarget {
  readonly bootstrap: string;
  readonly dist: KafkaDistribution;
}

export interface ToolOptions {
  /** Kill the tool after this long (default 5 minutes) and reject. */
  timeoutMs?: number;
  /** Written to the tool's stdin, which is then closed. */
  input?: string | Buffer;
  heapMb?: number;
  label?: string;
  /** Folders or jars put before Kafka's jars on the classpath. */
  extraClasspath?: readonly string[];
}

export interface ToolResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `mainClass args` to completion; resolves with its output whatever the exit code. */
export async function runTool(dist: KafkaDistribution, mainClass: string, args: readonly string[], options: ToolOptions = {}): Promise<ToolResult> {
  const started = Date.now();
  const jvm = spawnJava(dist, {
    label: options.label ?? mainClass,
    mainClass,
    args,
    heapMb: options.heapMb ?? 512,
    jvmArgs: [toolLogFlag(dist)],
    extraClasspath: options.extraClasspath,
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  jvm.child.stdout?.on('data', (c: Buffer) => out.push(c));
  jvm.child.stderr?.on('data', (c: Buffer) => err.push(c));
  // A tool that exits before reading its input makes the write fail with EPIPE: not our error.
  jvm.child.stdin?.on('error', () => {});
  jvm.child.stdin?.end(options.input ?? '');
  const timeoutMs = options.timeoutMs ?? 300_000;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void jvm.stop(2_000);
  }, timeoutMs);
  const exit = await jvm.exited;
  clearTimeout(timer);
  const stdout = Buffer.concat(out).toString('utf8');
  const stderr = Buffer.concat(err).toString('utf8');
  if (exit.error) throw new BrokerError(`could not run java for ${mainClass}: ${exit.error.message}`, { cause: exit.error });
  if (timedOut) {
    throw new BrokerError(`${options.label ?? mainClass} did not finish within ${timeoutMs} ms`, { logTail: lastLines(`${stdout}${stderr}`, 30) });
  }
  return { code: exit.code, stdout, stderr, ms: Date.now() - started };
}

/** Like runTool, but a non-zero exit is an error carrying the tool's output. */
async function runToolOk(dist: KafkaDistribution, mainClass: string, args: readonly string[], options: ToolOptions = {}): Promise<ToolResult> {
  const result = await runTool(dist, mainClass, args, options);
  if (result.code !== 0) {
    throw new BrokerError(`${options.label ?? mainClass} exited with code ${String(result.code)}`, {
      logTail: lastLines(`${result.stdout}${result.stderr}`, 30),
    });
  }
  return result;
}

function lastLines(text: string, n: number): string {
  return text.trimEnd().split('\n').slice(-n).join('\n');
}

const toolLogFiles = new Map<KafkaDistribution['logging'], string>();

/** WARN and above to stderr, so that the tools' stdout stays parseable. */
function toolLogFlag(dist: KafkaDistribution): string {
  let file = toolLogFiles.get(dist.logging);
  if (file === undefined) {
    const dir = join(cacheDir(), 'tool-logging');
    mkdirSync(dir, { recursive: true });
    file = join(dir, dist.logging === 'log4j2' ? 'log4j2.properties' : 'log4j.properties');
    const lines =
      dist.logging === 'log4j2'
        ? [
            'status = warn',
            'appender.err.type = Console',
            'appender.err.name = STDERR',
            'appender.err.target = SYSTEM_ERR',
            'appender.err.layout.type = PatternLayout',
            'appender.err.layout.pattern = [%d] %p %m (%c)%n',
            'rootLogger.level = WARN',
            'rootLogger.appenderRef.err.ref = STDERR',
          ]
        : [
            'log4j.rootLogger=WARN, stderr',
            'log4j.appender.stderr=org.apache.log4j.ConsoleAppender',
            'log4j.appender.stderr.Target=System.err',
            'log4j.appender.stderr.layout=org.apache.log4j.PatternLayout',
            'log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n',
          ];
    writeFileSync(file, `${lines.join('\n')}\n`);
    toolLogFiles.set(dist.logging, file);
  }
  return dist.logging === 'log4j2' ? `-Dlog4j2.configurationFile=${file}` : `-Dlog4j.configuration=file:${file}`;
}

/**
 * Client settings (SASL, TLS, ...) reach the tools through a properties file (--producer-props
 * rejects values holding '='). It may hold passwords: readable by us only, and removed after the run.
 */
async function withClientConfig<T>(config: Readonly<Record<string, string>> | undefined, run: (file: string | undefined) => Promise<T>): Promise<T> {
  if (!config || Object.keys(config).length === 0) return run(undefined);
  const dir = join(cacheDir(), 'tool-config');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `client-${process.pid}-${randomBytes(4).toString('hex')}.properties`);
  writeFileSync(
    file,
    `${Object.entries(config)
      .map(([k, v]) => `${k}=${v.replace(/\\/g, '\\\\')}`)
      .join('\n')}\n`,
    { mode: 0o600 },
  );
  try {
    return await run(file);
  } finally {
    rmSync(file, { force: true });
  }
}

export interface CreateTopicOptions {
  topic: string;
  partitions?: number;
  replicationFactor?: number;
  /** Topic configs, e.g. { 'cleanup.policy': 'compact' }. */
  config?: Readonly<Record<string, string | number>>;
  /** Admin client settings (SASL, TLS). */
  clientConfig?: Readonly<Record<string, string>>;
  timeoutMs?: number;
}

/** TopicCommand --create; succeeds when the topic exists already (--if-not-exists). */
export async function createTopic(target: KafkaTarget, options: CreateTopicOptions): Promise<void> {
  const args = [
    '--bootstrap-server',
    target.bootstrap,
    '--create',
    '--if-not-exists',
    '--topic',
    options.topic,
    '--partitions',
    String(options.partitions ?? 1),
    '--replication-factor',
    String(options.replicationFactor ?? 1),
  ];
  for (const [k, v] of Object.entries(options.config ?? {})) args.push('--config', `${k}=${v}`);
  await withClientConfig(options.clientConfig, (config) =>
    runToolOk(target.dist, 'org.apache.kafka.tools.TopicCommand', config ? [...args, '--command-config', config] : args, {
      timeoutMs: options.timeoutMs ?? 120_000,
      label: `create topic ${options.topic}`,
      heapMb: 256,
    }),
  );
}

export interface DescribedPartition {
  partition: number;
  leader: number;
  replicas: number[];
  isr: number[];
}

/** TopicCommand --describe, parsed: one entry per partition. */
export async function describeTopic(target: KafkaTarget, topic: string, clientConfig?: Readonly<Record<string, string>>): Promise<DescribedPartition[]> {
  const args = ['--bootstrap-server', target.bootstrap, '--describe', '--topic', topic];
  const { stdout } = await withClientConfig(clientConfig, (config) =>
    runToolOk(target.dist, 'org.apache.kafka.tools.TopicCommand', config ? [...args, '--command-config', config] : args, {
      timeoutMs: 120_000,
      label: `describe topic ${topic}`,
      heapMb: 256,
    }),
  );
  const partitions: DescribedPartition[] = [];
  for (const line of stdout.split('\n')) {
    const m = /Partition:\s*(\d+)\s+Leader:\s*(-?\d+)\s+Replicas:\s*([\d,]*)\s+Isr:\s*([\d,]*)/.exec(line);
    if (!m) continue;
    const list = (s: string) => (s ? s.split(',').map(Number) : []);
    partitions.push({ partition: Number(m[1]), leader: Number(m[2]), replicas: list(m[3]!), isr: list(m[4]!) });
  }
  return partitions;
}

export interface GroupPartitionOffset {
  topic: string;
  partition: number;
  /** The group's committed offset, or null where it has none ("-"). */
  committed: bigint | null;
  logEndOffset: bigint | null;
}

/**
 * Kafka's own ConsumerGroupCommand `--describe --offsets`, parsed: the group's committed offset per
 * partition, as an operator reads it (so a test checks kwire's commits with Kafka's tools, not with
 * kwire). Empty when the group has no committed offsets.
 */
export async function describeGroupOffsets(target: KafkaTarget, groupId: string): Promise<GroupPartitionOffset[]> {
  const { stdout } = await runToolOk(
    target.dist,
    'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand',
    ['--bootstrap-server', target.bootstrap, '--describe', '--offsets', '--group', groupId],
    {
      timeoutMs: 120_000,
      label: `describe group ${groupId}`,
      heapMb: 256,
    },
  );
  return parseGroupOffsets(stdout, groupId);
}

/** The table of `kafka-consumer-groups --describe`: GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ... */
export function parseGroupOffsets(stdout: string, groupId: string): GroupPartitionOffset[] {
  const out: GroupPartitionOffset[] = [];
  const offset = (s: string | undefined) => (s === undefined || s === '-' ? null : BigInt(s));
  for (const line of stdout.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols[0] !== groupId || cols.length < 5 || !/^\d+$/.test(cols[2]!)) continue;
    out.push({ topic: cols[1]!, partition: Number(cols[2]), committed: offset(cols[3]), logEndOffset: offset(cols[4]) });
  }
  return out.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
}

export type CompressionType = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

export interface ProducerPerformanceOptions {
  topic: string;
  numRecords: number;
  recordSize: number;
  compression?: CompressionType;
  /** Records per second; -1 (default) = as fast as possible. */
  throughput?: number;
  /** Extra producer properties (acks, linger.ms, batch.size, ...). */
  props?: Readonly<Record<string, string | number>>;
  /** Producer settings that may contain '=' (SASL JAAS lines): go through --producer.config. */
  clientConfig?: Readonly<Record<string, string>>;
  /** Makes the run transactional: commits every transactionDurationMs (the tool only commits). */
  transactionalId?: string;
  transactionDurationMs?: number;
  timeoutMs?: number;
}

export interface ProducerPerformanceResult {
  records: number;
  recordsPerSec: number;
  /** MiB per second, as the tool prints it ("MB/sec"). */
  mbPerSec: number;
  avgLatencyMs: number;
  maxLatencyMs: number;
  /** The tool's final summary line. */
  summary: string;
}

/**
 * ProducerPerformance: N records of S random A-Z bytes with null keys. Defaults favour loading
 * speed: acks=1, linger.ms=5, batch.size=64 KiB.
 */
export async function producerPerformance(target: KafkaTarget, options: ProducerPerformanceOptions): Promise<ProducerPerformanceResult> {
  const props: Record<string, string> = {
    'bootstrap.servers': target.bootstrap,
    acks: '1',
    'linger.ms': '5',
    'batch.size': '65536',
    'compression.type': options.compression ?? 'none',
  };
  for (const [k, v] of Object.entries(options.props ?? {})) props[k] = String(v);
  const args = [
    '--topic',
    options.topic,
    '--num-records',
    String(options.numRecords),
    '--record-size',
    String(options.recordSize),
    '--throughput',
    String(options.throughput ?? -1),
    '--producer-props',
    ...Object.entries(props).map(([k, v]) => `${k}=${v}`),
  ];
  if (options.transactionalId !== undefined) {
    args.push('--transactional-id', options.transactionalId, '--transaction-duration-ms', String(options.transactionDurationMs ?? 100));
  }
  const { stdout, stderr } = await withClientConfig(options.clientConfig, (config) =>
    runToolOk(target.dist, 'org.apache.kafka.tools.ProducerPerformance', config ? [...args, '--producer.config', config] : args, {
      timeoutMs: options.timeoutMs ?? 600_000,
      label: `ProducerPerformance ${options.topic}`,
    }),
  );
  try {
    return parseProducerPerformance(stdout, options.numRecords);
  } catch (err) {
    // The tool exits 0 even when nothing was sent (e.g. authentication failed): the reason is on stderr.
    throw new BrokerError((err as Error).message, { logTail: lastLines(`${stdout}${stderr}`, 30) });
  }
}

/**
 * The final line looks like (3.9 to 4.4, with small changes in 4.2 hence the tolerant pattern):
 * "100000 records sent, 45045.0 records/sec (4.30 MB/sec), 12.3 ms avg latency, 250.0 ms max latency, 10 ms 50th, ..."
 */
export function parseProducerPerformance(stdout: string, expected: number): ProducerPerformanceResult {
  const lines = stdout
    .trim()
    .split('\n')
    .filter((l) => /records sent/.test(l));
  const summary = lines.at(-1) ?? '';
  // NaN latencies when nothing was sent.
  const m = /(\d+) records sent,\s*([\d.]+) records\/sec \(([\d.]+) MB\/sec\),\s*([\d.]+|NaN) ms avg latency,\s*([\d.]+|NaN) ms max latency/.exec(summary);
  if (!m) throw new BrokerError('ProducerPerformance printed no summary line', { logTail: lastLines(stdout, 20) });
  const records = Number(m[1]);
  if (records !== expected) throw new BrokerError(`ProducerPerformance sent ${records} records, not ${expected}`, { logTail: summary });
  return {
    records,
    recordsPerSec: Number(m[2]),
    mbPerSec: Number(m[3]),
    avgLatencyMs: Number(m[4]),
    maxLatencyMs: Number(m[5]),
    summary,
  };
}

export interface ConsumerPerformanceOptions {
  topic: string;
  /** Stop after this many records. */
  messages: number;
  /** Group id; a fresh one per run by default, so each run reads from the start. */
  group?: string;
  /** Give up when no record arrives for this long (the tool's --timeout). */
  timeoutMs?: number;
  props?: Readonly<Record<string, string | number>>;
}

export interface ConsumerPerformanceResult {
  records: number;
  mb: number;
  /** Whole run including the group join. */
  mbPerSec: number;
  recordsPerSec: number;
  rebalanceMs: number;
  /** Excluding the group join: the figures to compare against. */
  fetchMs: number;
  fetchMbPerSec: number;
  fetchRecordsPerSec: number;
  csv: string;
}

/** ConsumerPerformance, the Java consumer baseline (it sets check.crcs=false). */
export async function consumerPerformance(target: KafkaTarget, options: ConsumerPerformanceOptions): Promise<ConsumerPerformanceResult> {
  const props: Record<string, string> = { 'auto.offset.reset': 'earliest' };
  for (const [k, v] of Object.entries(options.props ?? {})) props[k] = String(v);
  const v = target.dist.version;
  const args = [
    '--bootstrap-server',
    target.bootstrap,
    '--topic',
    options.topic,
    // 4.2 renamed --messages to --num-records (the old name still works there, with a warning).
    atLeast(v, 4, 2) ? '--num-records' : '--messages',
    String(options.messages),
    '--group',
    options.group ?? `kwire-perf-${randomBytes(4).toString('hex')}`,
    '--timeout',
    String(options.timeoutMs ?? 30_000),
  ];
  const { stdout } = await withClientConfig(props, (config) =>
    runToolOk(target.dist, 'org.apache.kafka.tools.ConsumerPerformance', [...args, '--consumer.config', config!], {
      timeoutMs: 600_000,
      heapMb: 1024,
      label: `ConsumerPerformance ${options.topic}`,
    }),
  );
  return parseConsumerPerformance(stdout);
}

/**
 * "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
 *  rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec" then one line of values.
 */
export function parseConsumerPerformance(stdout: string): ConsumerPerformanceResult {
  const lines = stdout.trim().split('\n');
  const header = lines.findIndex((l) => l.includes('data.consumed.in.MB'));
  const csv = header >= 0 ? lines[header + 1] : undefined;
  if (!csv) throw new BrokerError('ConsumerPerformance printed no result line', { logTail: lastLines(stdout, 20) });
  const cells = csv.split(',').map((c) => c.trim());
  const n = (i: number) => Number(cells[i]);
  if (cells.length < 10 || [2, 3, 4, 5, 6, 7, 8, 9].some((i) => !Number.isFinite(n(i)))) {
    throw new BrokerError('ConsumerPerformance result line is not as expected', { logTail: csv });
  }
  return {
    mb: n(2),
    mbPerSec: n(3),
    records: n(4),
    recordsPerSec: n(5),
    rebalanceMs: n(6),
    fetchMs: n(7),
    fetchMbPerSec: n(8),
    fetchRecordsPerSec: n(9),
    csv,
  };
}

export interface ConsoleConsumerOptions {
  topic: string;
  /** Stop after this many records (required, so the tool ends). */
  maxMessages: number;
  /** Read one partition from an offset ('earliest' by default), without a group. */
  partition?: number;
  offset?: number | 'earliest' | 'latest';
  /** Consume in a group instead (from-beginning for a new group). */
  group?: string;
  isolationLevel?: 'read_committed' | 'read_uncommitted';
  /** Give up after this long without a record (the tool's --timeout-ms). */
  idleTimeoutMs?: number;
  /** Print key, partition, offset, headers and timestamp, tab separated, before the value. */
  printMetadata?: boolean;
  props?: Readonly<Record<string, string | number>>;
  clientConfig?: Readonly<Record<string, string>>;
}

/** The console consumer: returns its stdout lines (one per record with the default formatter). */
export async function consoleConsumer(target: KafkaTarget, options: ConsoleConsumerOptions): Promise<string[]> {
  const args = ['--bootstrap-server', target.bootstrap, '--topic', options.topic, '--max-messages', String(options.maxMessages)];
  if (options.partition !== undefined) {
    args.push('--partition', String(options.partition), '--offset', String(options.offset ?? 'earliest'));
  } else {
    args.push('--from-beginning');
    if (options.group !== undefined) args.push('--group', options.group);
  }
  if (options.isolationLevel) args.push('--isolation-level', options.isolationLevel);
  args.push('--timeout-ms', String(options.idleTimeoutMs ?? 30_000));
  if (options.printMetadata) {
    // 4.x renamed --property to --formatter-property (the old name still works); use the one both know.
    for (const p of ['print.key=true', 'print.partition=true', 'print.offset=true', 'print.headers=true', 'print.timestamp=true']) {
      args.push('--property', p);
    }
  }
  const props: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.props ?? {})) props[k] = String(v);
  const label = `console consumer ${options.topic}`;
  const { stdout, stderr, code } = await withClientConfig({ ...props, ...(options.clientConfig ?? {}) }, (config) =>
    runTool(target.dist, 'org.apache.kafka.tools.consumer.ConsoleConsumer', config ? [...args, '--consumer.config', config] : args, {
      timeoutMs: (options.idleTimeoutMs ?? 30_000) + 120_000,
      label,
    }),
  );
  // Reaching the idle timeout short of maxMessages ends the tool with a TimeoutException (exit 0 in
  // 4.x, 1 in some older releases): the records printed so far are the answer either way.
  if (code !== 0 && !/TimeoutException/.test(stderr)) {
    throw new BrokerError(`${label} exited with code ${String(code)}`, { logTail: lastLines(`${stdout}${stderr}`, 30) });
  }
  return stdout.split('\n').filter((l, i, all) => !(i === all.length - 1 && l === ''));
}

export interface ConsoleProducerOptions {
  topic: string;
  /** One record per line; with parseKey, "key<TAB>value". */
  lines: readonly string[];
  parseKey?: boolean;
  props?: Readonly<Record<string, string | number>>;
  clientConfig?: Readonly<Record<string, string>>;
}

/** The console producer, fed through stdin. */
export async function consoleProducer(target: KafkaTarget, options: ConsoleProducerOptions): Promise<void> {
  const mainClass = atLeast(target.dist.version, 4, 0) ? 'org.apache.kafka.tools.ConsoleProducer' : 'kafka.tools.ConsoleProducer';
  const args = ['--bootstrap-server', target.bootstrap, '--topic', options.topic];
  if (options.parseKey) args.push('--property', 'parse.key=true', '--property', 'key.separator=\t');
  const props: Record<string, string> = { acks: 'all' };
  for (const [k, v] of Object.entries(options.props ?? {})) props[k] = String(v);
  await withClientConfig({ ...props, ...(options.clientConfig ?? {}) }, (config) =>
    runToolOk(target.dist, mainClass, config ? [...args, '--producer.config', config] : args, {
      input: options.lines.length ? `${options.lines.join('\n')}\n` : '',
      timeoutMs: 120_000,
      label: `console producer ${options.topic}`,
    }),
  );
}

/**
 * Group-level configs of a share group (KIP-932) through ConfigCommand, e.g.
 * `share.auto.offset.reset=earliest` (a new share group starts at the latest offset otherwise),
 * `share.record.lock.duration.ms` (the broker allows 15000-60000), `share.delivery.count.limit`.
 */
export async function alterGroupConfig(target: KafkaTarget, group: string, configs: Readonly<Record<string, string | number>>): Promise<void> {
  const pairs = Object.entries(configs)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');
  const args = ['--bootstrap-server', target.bootstrap, '--alter', '--entity-type', 'groups', '--entity-name', group, '--add-config', pairs];
  const options = { timeoutMs: 60_000, label: `ConfigCommand group ${group}` };
  // ConfigCommand moved from core (kafka.admin, Scala) to the tools module (Java) in 4.4 (it is in
  // kafka_2.13 in 4.2.2, in kafka-tools in 4.4.0); the other class is tried when one is missing.
  const classes = atLeast(target.dist.version, 4, 4) ? ['org.apache.kafka.tools.ConfigCommand', 'kafka.admin.ConfigCommand'] : ['kafka.admin.ConfigCommand', 'org.apache.kafka.tools.ConfigCommand'];
  const first = await runTool(target.dist, classes[0]!, args, options);
  if (first.code === 0) return;
  if (!/ClassNotFoundException/.test(first.stderr)) throw new BrokerError(`${options.label} exited with code ${String(first.code)}`, { logTail: lastLines(`${first.stdout}${first.stderr}`, 30) });
  await runToolOk(target.dist, classes[1]!, args, options);
}

export interface ConsoleShareConsumerOptions {
  topic: string;
  group: string;
  /** Stop after this many records. */
  maxMessages: number;
  /** Give up after this long without a record (the tool's --timeout-ms). */
  idleTimeoutMs?: number;
  /** How the tool acknowledges what it printed (accept by default). */
  acknowledge?: 'accept' | 'release' | 'reject';
  /** Print key, partition, offset and delivery count, tab separated, before the value. */
  printMetadata?: boolean;
  props?: Readonly<Record<string, string | number>>;
}

/** Kafka's console share consumer (a member of a share group): returns its stdout lines. */
export async function consoleShareConsumer(target: KafkaTarget, options: ConsoleShareConsumerOptions): Promise<string[]> {
  const args = ['--bootstrap-server', target.bootstrap, '--topic', options.topic, '--group', options.group, '--max-messages', String(options.maxMessages)];
  args.push('--timeout-ms', String(options.idleTimeoutMs ?? 30_000));
  if (options.acknowledge === 'release') args.push('--release');
  if (options.acknowledge === 'reject') args.push('--reject');
  if (options.printMetadata) {
    for (const p of ['print.key=true', 'print.partition=true', 'print.offset=true', 'print.delivery=true']) args.push('--formatter-property', p);
  }
  const props: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.props ?? {})) props[k] = String(v);
  const label = `console share consumer ${options.topic}`;
  const { stdout, stderr, code } = await withClientConfig(props, (config) =>
    runTool(target.dist, 'org.apache.kafka.tools.consumer.ConsoleShareConsumer', config ? [...args, '--command-config', config] : args, {
      timeoutMs: (options.idleTimeoutMs ?? 30_000) + 120_000,
      label,
    }),
  );
  if (code !== 0 && !/TimeoutException/.test(stderr)) {
    throw new BrokerError(`${label} exited with code ${String(code)}`, { logTail: lastLines(`${stdout}${stderr}`, 30) });
  }
  return stdout.split('\n').filter((l, i, all) => !(i === all.length - 1 && l === ''));
}

/** ShareGroupCommand --describe (ShareGroupDescribe through the Admin client): its stdout. */
export async function describeShareGroup(target: KafkaTarget, group: string, what: 'members' | 'offsets' = 'members'): Promise<string> {
  const args = ['--bootstrap-server', target.bootstrap, '--describe', '--group', group, what === 'members' ? '--members' : '--offsets'];
  const { stdout } = await runToolOk(target.dist, 'org.apache.kafka.tools.consumer.group.ShareGroupCommand', args, { timeoutMs: 60_000, label: `ShareGroupCommand ${group}` });
  return stdout;
}
