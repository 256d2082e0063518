import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureKafka, type KafkaDistribution } from './distribution.js';
import { BrokerError } from './errors.js';
import { spawnJava, type JavaProcess } from './jvm.js';
import { cacheDir } from './paths.js';
import { freePorts } from './ports.js';
import { probeApiVersions } from './probe.js';
import { generateBrokerTls, type BrokerTls } from './tls.js';
import { runTool, type KafkaTarget } from './tools.js';

export interface SaslUser {
  readonly username: string;
  readonly password: string;
}

/** The users every SASL listener knows, for PLAIN and both SCRAM mechanisms. */
export const DEFAULT_SASL_USERS: readonly SaslUser[] = [
  { username: 'alice', password: 'alice-secret' },
  { username: 'bob', password: 'bob-secret' },
];

export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const;

export interface StartKafkaOptions {
  /** Kafka release; defaults to KWIRE_KAFKA_VERSION or the newest 4.x. */
  version?: string;
  /** 1 (default) or 3 combined broker+controller nodes on loopback. */
  nodes?: 1 | 3;
  /**
   * Adds a SASL_PLAINTEXT listener with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER
   * (Kafka's unsecured JWT validator: a token signed with alg "none" and a "sub" claim passes).
   */
  sasl?: boolean;
  /** Users for PLAIN and SCRAM; DEFAULT_SASL_USERS when not given. */
  users?: readonly SaslUser[];
  /** Adds an SSL listener with a self-signed certificate made by keytool at start (with `sasl`, a SASL_SSL one too). */
  ssl?: boolean;
  /** Broker heap in MiB (-Xms = -Xmx); 1024, as Kafka's scripts, by default. */
  heapMb?: number;
  /** Extra or overriding server.properties entries, applied to every node. */
  config?: Readonly<Record<string, string | number | boolean>>;
  /** Per-node entries on top of `config` (e.g. broker.rack for rack-aware tests). */
  nodeConfig?: (nodeId: number) => Readonly<Record<string, string | number | boolean>>;
  /** How long to wait for every node to answer ApiVersions. */
  startTimeoutMs?: number;
  /** Keep data dirs and logs after stop() (also KWIRE_KEEP_BROKER_FILES=1). */
  keepFiles?: boolean;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface KafkaNode {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly controllerPort: number;
  readonly saslPort: number | undefined;
  readonly sslPort: number | undefined;
  /** SASL over TLS: with both `sasl` and `ssl`. */
  readonly saslSslPort: number | undefined;
  readonly dataDir: string;
  readonly logFile: string;
  /** The JVM's pid while it runs. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** (Re)starts the node on the same ports and data, and waits until it answers ApiVersions. */
  start(): Promise<void>;
  /** Controlled shutdown (SIGTERM), SIGKILL after graceMs. */
  stop(graceMs?: number): Promise<void>;
  /** Kills the JVM (SIGKILL by default) and waits until it is gone: a crash, for failover tests. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** The last lines of the node's log. */
  logTail(lines?: number): string;
}

export interface KafkaCluster extends KafkaTarget {
  readonly clusterId: string;
  /** Comma-separated PLAINTEXT host:port of every node. */
  readonly bootstrap: string;
  readonly nodes: readonly KafkaNode[];
  readonly sasl: { readonly bootstrap: string; readonly users: readonly SaslUser[]; readonly mechanisms: readonly string[] } | undefined;
  readonly ssl: ({ readonly bootstrap: string } & BrokerTls) | undefined;
  /** A SASL_SSL listener (PLAIN and SCRAM over TLS, the same users and certificate): with both `sasl` and `ssl`. */
  readonly saslSsl: { readonly bootstrap: string } | undefined;
  /** The folder with every node's config, data and log. */
  readonly dir: string;
  /** Stops every node and removes the folder (unless keepFiles). Safe to call twice. */
  stop(): Promise<void>;
  /** Last lines of every node's log, headed by node id. */
  logTail(lines?: number): string;
}

const HOST = '127.0.0.1';

/**
 * Formats and starts a KRaft cluster of combined broker+controller nodes on 127.0.0.1, on free
 * ports, in a fresh folder under <cache>/runs, and resolves once every node answers an ApiVersions
 * request on its PLAINTEXT listener. Rejects (with the log tail) if a JVM exits or the wait times out.
 */
export async function startKafka(options: StartKafkaOptions = {}): Promise<KafkaCluster> {
  const dist = await ensureKafka(options.version, { log: options.log });
  // A port taken between freePorts() and the JVM's bind makes start fail with BindException; the
  // whole cluster is then retried on new ports (rare: it needs another process racing us).
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(dist, options);
    } catch (err) {
      if (attempt < 3 && err instanceof BrokerError && /Address already in use|BindException/.test(err.logTail ?? '')) {
        options.log?.(`a port was taken, retrying (${attempt})`);
        continue;
      }
      throw err;
    }
  }
}

async function startOnce(dist: KafkaDistribution, options: StartKafkaOptions): Promise<KafkaCluster> {
  const nodeCount = options.nodes ?? 1;
  if (nodeCount !== 1 && nodeCount !== 3) throw new BrokerError(`nodes must be 1 or 3, not ${String(nodeCount)}`);
  const users = options.users ?? DEFAULT_SASL_USERS;
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  const runs = join(cacheDir(), 'runs');
  await pruneStaleRuns(runs);
  const dir = join(runs, `${stamp}-${process.pid}-${randomBytes(3).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  const keep = options.keepFiles || process.env.KWIRE_KEEP_BROKER_FILES === '1';

  const perNode = 2 + (options.sasl ? 1 : 0) + (options.ssl ? 1 : 0) + (options.sasl && options.ssl ? 1 : 0);
  const ports = await freePorts(perNode * nodeCount);
  const tls = options.ssl ? await generateBrokerTls(dir) : undefined;
  const clusterId = newClusterId();

  const specs: NodeSpec[] = [];
  for (let i = 0; i < nodeCount; i++) {
    const p = ports.slice(i * perNode, (i + 1) * perNode);
    let k = 2;
    specs.push({
      nodeId: i + 1,
      port: p[0]!,
      controllerPort: p[1]!,
      saslPort: options.sasl ? p[k++] : undefined,
      sslPort: options.ssl ? p[k++] : undefined,
      saslSslPort: options.sasl && options.ssl ? p[k++] : undefined,
      dir: join(dir, `node-${i + 1}`),
    });
  }
  const voters = specs.map((s) => `${s.nodeId}@${HOST}:${s.controllerPort}`).join(',');

  const nodes: NodeHandle[] = [];
  for (const spec of specs) {
    await mkdir(join(spec.dir, 'data'), { recursive: true });
    const properties = serverProperties(spec, voters, nodeCount, users, tls, { ...(options.config ?? {}), ...(options.nodeConfig?.(spec.nodeId) ?? {}) });
    await writeFile(join(spec.dir, 'server.properties'), properties);
    await writeFile(join(spec.dir, logConfigName(dist)), brokerLogConfig(dist));
    nodes.push(new NodeHandle(dist, spec, options.heapMb ?? 1024, options.startTimeoutMs ?? 180_000, options.log));
  }

  const cluster = new Cluster(dist, clusterId, dir, nodes, keep, options.sasl ? users : undefined, tls);
  try {
    options.log?.(`formatting ${nodeCount} KRaft node(s), Kafka ${dist.version.text}, cluster ${clusterId}`);
    await Promise.all(specs.map((spec) => formatStorage(dist, spec, clusterId, options.sasl ? users : [])));
    options.log?.(`starting ${nodeCount} node(s) in ${dir}`);
    // All at once: with three voters no node can finish starting until a quorum is up.
    await Promise.all(nodes.map((n) => n.start()));
    options.log?.(`Kafka ${dist.version.text} ready at ${cluster.bootstrap}`);
    return cluster;
  } catch (err) {
    const tail = cluster.logTail(40);
    await cluster.stop({ keepFiles: true });
    if (err instanceof BrokerError) {
      throw err.logTail === undefined ? new BrokerError(err.message, { cause: err.cause, logTail: tail }) : err;
    }
    throw new BrokerError('Kafka did not start', { cause: err, logTail: tail });
  }
}

/**
 * Removes run folders whose owning process is gone (a run killed before it could clean up). They
 * can hold gigabytes of log segments after a benchmark.
 */
async function pruneStaleRuns(runs: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(runs);
  } catch {
    return;
  }
  for (const name of entries) {
    const owner = Number(/^\d{8}T\d{6}-(\d+)-[0-9a-f]+$/.exec(name)?.[1]);
    if (!owner || owner === process.pid || processExists(owner)) continue;
    await rm(join(runs, name), { recursive: true, force: true });
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface NodeSpec {
  nodeId: number;
  port: number;
  controllerPort: number;
  saslPort: number | undefined;
  sslPort: number | undefined;
  saslSslPort: number | undefined;
  dir: string;
}

function newClusterId(): string {
  // 16 random bytes in base64url without padding, not starting with '-' (StorageTool rejects that).
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function serverProperties(
  spec: NodeSpec,
  voters: string,
  nodeCount: number,
  users: readonly SaslUser[],
  tls: BrokerTls | undefined,
  overrides: Readonly<Record<string, string | number | boolean>>,
): string {
  const listeners = [`PLAINTEXT://${HOST}:${spec.port}`, `CONTROLLER://${HOST}:${spec.controllerPort}`];
  const advertised = [`PLAINTEXT://${HOST}:${spec.port}`];
  if (spec.saslPort !== undefined) {
    listeners.push(`SASL_PLAINTEXT://${HOST}:${spec.saslPort}`);
    advertised.push(`SASL_PLAINTEXT://${HOST}:${spec.saslPort}`);
  }
  if (spec.sslPort !== undefined) {
    listeners.push(`SSL://${HOST}:${spec.sslPort}`);
    advertised.push(`SSL://${HOST}:${spec.sslPort}`);
  }
  if (spec.saslSslPort !== undefined) {
    listeners.push(`SASL_SSL://${HOST}:${spec.saslSslPort}`);
    advertised.push(`SASL_SSL://${HOST}:${spec.saslSslPort}`);
  }
  const props: Record<string, string> = {
    'process.roles': 'broker,controller',
    'node.id': String(spec.nodeId),
    'controller.quorum.voters': voters,
    listeners: listeners.join(','),
    // 127.0.0.1, not localhost: Node may resolve localhost to ::1 first.
    'advertised.listeners': advertised.join(','),
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL',
    'log.dirs': join(spec.dir, 'data'),
    'num.partitions': '1',
    // The internal topics live on every node: with one replica each, a third of a 3-node cluster's
    // group coordinators die with any one node, and a failover test's consumer group (whose
    // coordinator partition follows from its random id) would fail one run in three.
    'offsets.topic.replication.factor': String(nodeCount),
    'transaction.state.log.replication.factor': String(nodeCount),
    'transaction.state.log.min.isr': '1',
    'share.coordinator.state.topic.replication.factor': String(nodeCount),
    'share.coordinator.state.topic.min.isr': '1',
    // A test's first group must not wait the default 3 s for more members.
    'group.initial.rebalance.delay.ms': '0',
  };
  if (spec.saslPort !== undefined) {
    const plainUsers = users.map((u) => `user_${u.username}=${jaasQuote(u.password)}`).join(' ');
    props['sasl.enabled.mechanisms'] = SASL_MECHANISMS.join(',');
    // The same mechanisms and users on SASL_PLAINTEXT and, with TLS, on SASL_SSL.
    for (const listener of spec.saslSslPort !== undefined ? ['sasl_plaintext', 'sasl_ssl'] : ['sasl_plaintext']) {
      props[`listener.name.${listener}.sasl.enabled.mechanisms`] = SASL_MECHANISMS.join(',');
      props[`listener.name.${listener}.plain.sasl.jaas.config`] = `org.apache.kafka.common.security.plain.PlainLoginModule required ${plainUsers};`;
      props[`listener.name.${listener}.scram-sha-256.sasl.jaas.config`] = 'org.apache.kafka.common.security.scram.ScramLoginModule required;';
      props[`listener.name.${listener}.scram-sha-512.sasl.jaas.config`] = 'org.apache.kafka.common.security.scram.ScramLoginModule required;';
      props[`listener.name.${listener}.oauthbearer.sasl.jaas.config`] = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="kwire-broker";';
    }
    // KIP-368: lets a client test re-authentication without waiting an hour.
    props['connections.max.reauth.ms'] = '0';
  }
  if (tls !== undefined) {
    for (const listener of spec.saslSslPort !== undefined ? ['ssl', 'sasl_ssl'] : ['ssl']) {
      props[`listener.name.${listener}.ssl.keystore.type`] = 'PKCS12';
      props[`listener.name.${listener}.ssl.keystore.location`] = tls.keystoreFile;
      props[`listener.name.${listener}.ssl.keystore.password`] = tls.password;
      props[`listener.name.${listener}.ssl.key.password`] = tls.password;
    }
  }
  for (const [k, v] of Object.entries(overrides)) props[k] = String(v);
  return `${Object.entries(props)
    .map(([k, v]) => `${k}=${escapeProperty(v)}`)
    .join('\n')}\n`;
}

function jaasQuote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** java.util.Properties treats backslashes as escapes; everything else we write is literal. */
function escapeProperty(value: string): string {
  return value.replace(/\\/g, '\\\\');
}

function logConfigName(dist: KafkaDistribution): string {
  return dist.logging === 'log4j2' ? 'log4j2.properties' : 'log4j.properties';
}

/** INFO to stdout, which the launcher sends to the node's broker.log (with the JVM's own stderr). */
function brokerLogConfig(dist: KafkaDistribution): string {
  if (dist.logging === 'log4j2') {
    return [
      'status = warn',
      'appender.out.type = Console',
      'appender.out.name = STDOUT',
      'appender.out.layout.type = PatternLayout',
      'appender.out.layout.pattern = [%d] %p %m (%c)%n',
      'rootLogger.level = INFO',
      'rootLogger.appenderRef.out.ref = STDOUT',
      // The request logger at INFO would print every request; state change logs are noise here.
      'logger.request.name = kafka.request.logger',
      'logger.request.level = WARN',
      'logger.state.name = state.change.logger',
      'logger.state.level = WARN',
      '',
    ].join('\n');
  }
  return [
    'log4j.rootLogger=INFO, stdout',
    'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
    'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
    'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
    'log4j.logger.kafka.request.logger=WARN',
    'log4j.logger.state.change.logger=WARN',
    '',
  ].join('\n');
}

export function logConfigFlag(dist: KafkaDistribution, file: string): string {
  return dist.logging === 'log4j2' ? `-Dlog4j2.configurationFile=${file}` : `-Dlog4j.configuration=file:${file}`;
}

async function formatStorage(dist: KafkaDistribution, spec: NodeSpec, clusterId: string, scramUsers: readonly SaslUser[]): Promise<void> {
  const args = ['format', '-t', clusterId, '-c', join(spec.dir, 'server.properties')];
  for (const u of scramUsers) {
    for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512']) {
      args.push('--add-scram', `${mechanism}=[name=${u.username},password=${u.password}]`);
    }
  }
  const result = await runTool(dist, 'kafka.tools.StorageTool', args, { timeoutMs: 120_000, label: `format node ${spec.nodeId}` });
  if (result.code !== 0) {
    throw new BrokerError(`StorageTool format failed for node ${spec.nodeId} (exit ${String(result.code)})`, {
      logTail: `${result.stdout}${result.stderr}`.trim().split('\n').slice(-30).join('\n'),
    });
  }
}

class NodeHandle implements KafkaNode {
  readonly host = HOST;
  readonly nodeId: number;
  readonly port: number;
  readonly controllerPort: number;
  readonly saslPort: number | undefined;
  readonly sslPort: number | undefined;
  readonly saslSslPort: number | undefined;
  readonly dataDir: string;
  readonly logFile: string;
  private jvm: JavaProcess | undefined;

  constructor(
    private readonly dist: KafkaDistribution,
    private readonly spec: NodeSpec,
    private readonly heapMb: number,
    private readonly startTimeoutMs: number,
    private readonly log: ((line: string) => void) | undefined,
  ) {
    this.nodeId = spec.nodeId;
    this.port = spec.port;
    this.controllerPort = spec.controllerPort;
    this.saslPort = spec.saslPort;
    this.sslPort = spec.sslPort;
    this.saslSslPort = spec.saslSslPort;
    this.dataDir = join(spec.dir, 'data');
    this.logFile = join(spec.dir, 'broker.log');
  }

  get pid(): number | undefined {
    return this.jvm?.running ? this.jvm.pid : undefined;
  }

  get running(): boolean {
    return this.jvm?.running ?? false;
  }

  async start(): Promise<void> {
    if (this.running) return;
    const jvm = spawnJava(this.dist, {
      label: `kafka node ${this.nodeId}`,
      mainClass: 'kafka.Kafka',
      args: [join(this.spec.dir, 'server.properties')],
      heapMb: this.heapMb,
      heapFixed: true,
      jvmArgs: [logConfigFlag(this.dist, join(this.spec.dir, logConfigName(this.dist))), `-Dkafka.logs.dir=${this.spec.dir}`],
      cwd: this.spec.dir,
      logFile: this.logFile,
    });
    this.jvm = jvm;
    const deadline = Date.now() + this.startTimeoutMs;
    let lastError: unknown;
    for (;;) {
      if (!jvm.running) {
        const exit = await jvm.exited;
        const why = exit.error ? `could not start java: ${exit.error.message}` : `exited with ${exit.signal ?? `code ${String(exit.code)}`}`;
        throw new BrokerError(`Kafka node ${this.nodeId} ${why} before it was ready`, { logTail: this.logTail(40) });
      }
      try {
        await probeApiVersions(HOST, this.port, 2_000);
        this.log?.(`node ${this.nodeId} answers on ${HOST}:${this.port} (pid ${jvm.pid})`);
        return;
      } catch (err) {
        lastError = err;
      }
      if (Date.now() > deadline) {
        await jvm.stop(5_000);
        throw new BrokerError(`Kafka node ${this.nodeId} did not answer ApiVersions on ${HOST}:${this.port} within ${this.startTimeoutMs} ms (last: ${String(lastError)})`, {
          logTail: this.logTail(40),
        });
      }
      await sleep(200);
    }
  }

  async stop(graceMs = 30_000): Promise<void> {
    await this.jvm?.stop(graceMs);
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const jvm = this.jvm;
    if (!jvm?.running) return;
    jvm.kill(signal);
    await jvm.exited;
  }

  logTail(lines = 40): string {
    return tailFile(this.logFile, lines);
  }
}

class Cluster implements KafkaCluster {
  readonly bootstrap: string;
  readonly sasl: KafkaCluster['sasl'];
  readonly ssl: KafkaCluster['ssl'];
  readonly saslSsl: KafkaCluster['saslSsl'];
  private stopped: Promise<void> | undefined;

  constructor(
    readonly dist: KafkaDistribution,
    readonly clusterId: string,
    readonly dir: string,
    readonly nodes: readonly NodeHandle[],
    private readonly keepFiles: boolean,
    saslUsers: readonly SaslUser[] | undefined,
    tls: BrokerTls | undefined,
  ) {
    this.bootstrap = nodes.map((n) => `${HOST}:${n.port}`).join(',');
    this.sasl = saslUsers && {
      bootstrap: nodes.map((n) => `${HOST}:${n.saslPort!}`).join(','),
      users: saslUsers,
      mechanisms: SASL_MECHANISMS,
    };
    this.ssl = tls && { bootstrap: nodes.map((n) => `${HOST}:${n.sslPort!}`).join(','), ...tls };
    this.saslSsl = nodes[0]?.saslSslPort !== undefined ? { bootstrap: nodes.map((n) => `${HOST}:${n.saslSslPort!}`).join(',') } : undefined;
  }

  stop(options: { keepFiles?: boolean } = {}): Promise<void> {
    this.stopped ??= (async () => {
      // With every voter going down at once the last ones cannot finish a controlled shutdown;
      // a bounded grace period, then SIGKILL.
      await Promise.all(this.nodes.map((n) => n.stop(this.nodes.length > 1 ? 10_000 : 30_000)));
      if (!this.keepFiles && !options.keepFiles) await rm(this.dir, { recursive: true, force: true });
    })();
    return this.stopped;
  }

  logTail(lines = 40): string {
    return this.nodes
      .filter((n) => existsSync(n.logFile))
      .map((n) => `[node ${n.nodeId}: ${n.logFile}]\n${n.logTail(lines)}`)
      .join('\n');
  }
}

/** The last `lines` lines of a file, reading at most its last 64 KiB. */
export function tailFile(file: string, lines: number): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return `(no log at ${file})`;
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, 64 * 1024);
    const buf = Buffer.allocUnsafe(length);
    readSync(fd, buf, 0, length, size - length);
    return buf
      .toString('utf8')
      .split('\n')
      .slice(-lines - 1)
      .join('\n')
      .trimEnd();
  } finally {
    closeSync(fd);
  }
}
