// The differential harness: one scenario script, written once against kafkajs's consumer API, run
// with a given module (kafkajs 2.2.4 itself, or @kwire/kafkajs) under topics and a group of its own,
// recording a trace of what the application observes. Traces keep only what does not depend on
// timing (see allowed-differences.md): records in order per partition, event and payload shapes,
// errors by class and `retriable`, and notes a scenario takes at points its script makes
// deterministic. Committed offsets are added afterwards by the test file (ConsumerGroupCommand).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer, ConsumerConfig, Kafka, KafkaConfig, KafkaMessage, Producer } from 'kafkajs';

/** What a module under test exports: kafkajs's own surface (the facade is typed through it). */
export type KafkaModule = typeof import('kafkajs');

export type Label = 'kafkajs' | 'kwire';

/** The consumer events a trace records the shape of. REQUEST* (one per network request) are left out. */
export const TRACED_EVENTS = [
  'GROUP_JOIN',
  'FETCH_START',
  'FETCH',
  'START_BATCH_PROCESS',
  'END_BATCH_PROCESS',
  'COMMIT_OFFSETS',
  'HEARTBEAT',
  'CONNECT',
  'DISCONNECT',
  'STOP',
  'CRASH',
  'REBALANCING',
] as const;
export type TracedEvent = (typeof TRACED_EVENTS)[number];

/** Where a scenario connects: the run's plaintext broker, or the SASL/TLS cluster. */
export interface Endpoint {
  /** For setup and production (plaintext). */
  readonly plain: string;
  /** For the consumer under test, with its security settings. */
  readonly brokers: string;
  readonly client?: Pick<KafkaConfig, 'ssl' | 'sasl'>;
}

export interface Env {
  readonly plaintext: Endpoint;
  /** The SASL/TLS cluster, when it started; scenarios that need it are skipped with a reason otherwise. */
  secure?: {
    readonly plain: string;
    readonly sasl: string;
    readonly ssl: string;
    readonly saslSsl: string | undefined;
    readonly caPem: string;
    readonly users: readonly { username: string; password: string }[];
  };
  /** The setup side (always kafkajs itself): admin and producer on a plaintext bootstrap. */
  setupKafka(plain: string): Kafka;
  producer(plain: string): Promise<Producer>;
}

/** A tolerated difference, by its id in allowed-differences.md. */
export type AllowedId = 'commit-less'; // kwire commits less than kafkajs (never past an unfinished record)

export interface Scenario {
  name: string;
  /** Partitions of each topic the harness creates (T0, T1, ...). */
  topics: number[];
  /** Where the consumer under test connects: a listener of the SASL/TLS cluster (default: the plaintext broker). */
  security?: 'sasl-plain' | 'sasl-scram-256' | 'sasl-scram-512' | 'ssl' | 'sasl-ssl' | 'oauthbearer';
  /** Consumer events whose payload shapes are recorded (each must occur in every run: set the script so). */
  events?: TracedEvent[];
  /** Differences tolerated for this scenario (each explained in allowed-differences.md). */
  allow?: AllowedId[];
  /** Whether to read committed offsets back afterwards (default true). */
  committed?: boolean;
  run(ctx: Ctx): Promise<void>;
}

export interface Trace {
  /** "T0/1" -> deliveries in order, each "offset key value headers". */
  records: Record<string, string[]>;
  /** event type -> its payload shapes ("field:type" lists), deduplicated and sorted. */
  events: Record<string, string[]>;
  /** What the script observed at deterministic points (errors, return values, shapes). */
  notes: string[];
  /** "T0/1" -> committed offset read back after the run ("-" when none). */
  committed: Record<string, string>;
}

export interface Ctx {
  readonly module: KafkaModule;
  readonly label: Label;
  /** The Kafka client of the module under test, configured for the scenario's endpoint. */
  readonly kafka: Kafka;
  readonly topics: string[];
  readonly groupId: string;
  /** A prefix no other run's topic has (for RegExp subscriptions). */
  readonly prefix: string;
  readonly env: Env;
  readonly endpoint: Endpoint;
  /** A consumer of the module under test with the suite's fast settings, then `config`; disconnected at the end. */
  consumer(config?: Partial<ConsumerConfig>): Consumer;
  /** Records the shapes of the scenario's events on `consumer` (call before connect). */
  listen(consumer: Consumer, events?: readonly TracedEvent[]): void;
  /** Produces with kafkajs's producer (the setup side), to partition `partition` of topic T`topic`. */
  produce(topic: number, partition: number, messages: ProducedMessage[], compression?: number): Promise<void>;
  /** `n` records "k<i>"/"v<i>" starting at `from`. */
  numbered(n: number, from?: number): ProducedMessage[];
  /** Records a delivery handed to the application. */
  record(topic: string, partition: number, message: KafkaMessage): void;
  /** Deliveries seen so far (all partitions). */
  delivered(): number;
  /** Deliveries seen so far of one partition of T`topic`. */
  deliveredOf(topic: number, partition: number): number;
  note(line: string): void;
  /** Notes an error: its class name, `retriable`, and the names along its cause chain. */
  error(where: string, e: unknown): void;
  /** Runs `fn`, noting what it returns (normalized) or the error it throws. */
  attempt(where: string, fn: () => unknown): Promise<unknown>;
  /** Waits for `cond`; fails the scenario after `timeoutMs` (a stuck run is a difference too). */
  until(what: string, cond: () => boolean, timeoutMs?: number): Promise<void>;
  /** How often `type` was emitted so far, by the consumers listen() was called on. */
  events(type: TracedEvent): number;
  /** Normalizes values for notes: topic names to T<i>, Buffers to text, bigints to strings. */
  show(value: unknown): string;
}

export interface ProducedMessage {
  key?: string | Buffer | null;
  value: string | Buffer | null;
  headers?: Record<string, string | Buffer | (string | Buffer)[] | undefined>;
  /** CreateTime in ms, as kafkajs's producer takes it. */
  timestamp?: string;
}

/** The suite's consumer settings: kafkajs's defaults would make each rebalance take seconds. */
export const FAST: Partial<ConsumerConfig> = {
  sessionTimeout: 6_000,
  rebalanceTimeout: 5_000,
  heartbeatInterval: 300,
  maxWaitTimeInMs: 100,
};

const UNTIL_MS = 30_000;
/** A whole scenario run: the slowest take about 3 s alone, several times that on a loaded machine. */
const RUN_MS = 90_000;

export function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Buffer.isBuffer(v)) return 'Buffer';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** "field:type" for each own field, sorted: an object's shape without its values. */
export function shape(o: unknown): string {
  if (o === null || o === undefined || typeof o !== 'object') return typeOf(o);
  return Object.keys(o)
    .sort()
    .map((k) => `${k}:${typeOf((o as Record<string, unknown>)[k])}`)
    .join(',');
}

function text(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (Buffer.isBuffer(v)) return `b${JSON.stringify(v.toString('utf8'))}`;
  if (typeof v === 'string') return `s${JSON.stringify(v)}`;
  return `${typeOf(v)}?`;
}

function headersText(h: unknown): string {
  if (h === undefined) return 'h=undefined';
  if (h === null || typeof h !== 'object') return `h=${typeOf(h)}`;
  // In the object's own order: kafkajs keeps the order of the wire.
  const parts = Object.keys(h).map((k) => {
    const v = (h as Record<string, unknown>)[k];
    return `${k}=${Array.isArray(v) ? `[${v.map(text).join(',')}]` : text(v)}`;
  });
  return `h={${parts.join(' ')}}`;
}

/** Runs one scenario with one module and returns its trace (committed offsets still empty). */
export async function runScenario(
  scenario: Scenario,
  module: KafkaModule,
  label: Label,
  env: Env,
  runId: string,
  index: number,
): Promise<{ trace: Trace; topics: string[]; groupId: string; plain: string }> {
  const prefix = `kjd-${runId}-${index}-${label}`;
  const topics = scenario.topics.map((_, i) => `${prefix}-t${i}`);
  const groupId = `${prefix}-g`;
  const endpoint = endpointOf(scenario, env);
  const trace: Trace = { records: {}, events: {}, notes: [], committed: {} };
  const eventShapes = new Map<string, Set<string>>();
  const eventCounts = new Map<string, number>();
  const consumers: Consumer[] = [];
  let deliveries = 0;
  const perPartition = new Map<string, number>();

  const setup = env.setupKafka(endpoint.plain);
  const admin = setup.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: topics.map((topic, i) => ({ topic, numPartitions: scenario.topics[i] })), waitForLeaders: false });
    // kafkajs's own waitForLeaders gives up on UNKNOWN_TOPIC_OR_PARTITION while the metadata spreads.
    const deadline = Date.now() + UNTIL_MS;
    for (;;) {
      const ready = await admin
        .fetchTopicMetadata({ topics })
        .then((m) => m.topics.every((t) => t.partitions.length === scenario.topics[topics.indexOf(t.name)] && t.partitions.every((p) => p.leader >= 0)))
        .catch(() => false);
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`topics ${topics.join(', ')} have no leaders after ${UNTIL_MS} ms`);
      await sleep(50);
    }
  } finally {
    await admin.disconnect();
  }
  const producer = await env.producer(endpoint.plain);

  const topicName = (t: string): string => {
    const i = topics.indexOf(t);
    return i >= 0 ? `T${i}` : t.startsWith(prefix) ? `<prefix>${t.slice(prefix.length)}` : t;
  };
  // Names of this run (topics, group, prefix) become placeholders, in keys as well as values.
  const names: [string, string][] = [...topics.map((t, i): [string, string] => [t, `T${i}`]), [groupId, '<group>'], [prefix, '<prefix>']];
  const show = (v: unknown): string => {
    let s =
      JSON.stringify(v, (_k, x: unknown) => {
        if (typeof x === 'bigint') return `${x}n`;
        if (x && typeof x === 'object' && (x as { type?: unknown }).type === 'Buffer' && Array.isArray((x as { data?: unknown }).data)) {
          return `Buffer(${Buffer.from((x as { data: number[] }).data).toString('utf8')})`;
        }
        return x;
      }) ?? 'undefined';
    for (const [name, placeholder] of names) s = s.split(name).join(placeholder);
    return s;
  };
  const kafka = new module.Kafka({
    clientId: 'kjd-consumer',
    brokers: endpoint.brokers.split(','),
    logLevel: module.logLevel.NOTHING,
    ...endpoint.client,
  });

  const ctx: Ctx = {
    module,
    label,
    kafka,
    topics,
    groupId,
    prefix,
    env,
    endpoint,
    consumer(config = {}) {
      const c = kafka.consumer({ groupId, ...FAST, ...config });
      consumers.push(c);
      return c;
    },
    listen(consumer, events = scenario.events ?? []) {
      for (const type of events) {
        consumer.on(consumer.events[type], (e: { id?: unknown; type?: unknown; timestamp?: unknown; payload?: unknown }) => {
          eventCounts.set(type, (eventCounts.get(type) ?? 0) + 1);
          const set = eventShapes.get(type) ?? new Set<string>();
          set.add(`event{${shape(e)}} type=${String(e.type)} payload{${shape(e.payload)}}`);
          eventShapes.set(type, set);
        });
      }
    },
    async produce(topic, partition, messages, compression) {
      await producer.send({ topic: topics[topic], compression, messages: messages.map((m) => ({ ...m, partition })) });
    },
    numbered(n, from = 0) {
      return Array.from({ length: n }, (_, i) => ({ key: `k${from + i}`, value: `v${from + i}` }));
    },
    record(topic, partition, m) {
      const key = `${topicName(topic)}/${partition}`;
      const list = trace.records[key] ?? [];
      const { magicByte, attributes } = m as { magicByte?: unknown; attributes?: unknown };
      list.push(`${typeOf(m.offset)}${String(m.offset)} k=${text(m.key)} v=${text(m.value)} ${headersText(m.headers)} magic=${String(magicByte)} attr=${String(attributes)}`);
      trace.records[key] = list;
      deliveries++;
      perPartition.set(key, (perPartition.get(key) ?? 0) + 1);
    },
    delivered: () => deliveries,
    deliveredOf: (t, p) => perPartition.get(`T${t}/${p}`) ?? 0,
    note(line) {
      trace.notes.push(line);
    },
    error(where, e) {
      trace.notes.push(`${where}: error ${describeError(e)}`);
    },
    async attempt(where, fn) {
      try {
        const v = await fn();
        trace.notes.push(`${where}: returned ${show(v)}`);
        return v;
      } catch (e) {
        ctx.error(where, e);
        return undefined;
      }
    },
    async until(what, cond, timeoutMs = UNTIL_MS) {
      const deadline = Date.now() + timeoutMs;
      while (!cond()) {
        if (Date.now() > deadline) throw new Error(`${label}: timed out after ${timeoutMs} ms waiting for ${what} (deliveries so far: ${deliveries})`);
        await sleep(10);
      }
    },
    events: (type) => eventCounts.get(type) ?? 0,
    show,
  };

  // A script that hangs (a facade call that never settles) fails its run instead of the suite.
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label}: the scenario did not finish within ${RUN_MS} ms (deliveries so far: ${deliveries})`)), RUN_MS);
  });
  try {
    await Promise.race([scenario.run(ctx), limit]);
  } finally {
    clearTimeout(timer);
    // Every consumer is disconnected, bounded: a hanging disconnect fails the run instead of the suite.
    await Promise.all(
      consumers.map(async (c) => {
        const done = c.disconnect().catch(() => undefined);
        const bounded = await Promise.race([done.then(() => true), sleep(20_000, undefined, { ref: false }).then(() => false)]);
        if (!bounded) trace.notes.push('disconnect did not finish within 20 s');
      }),
    );
  }
  for (const [type, set] of eventShapes) trace.events[type] = [...set].sort();
  for (const type of scenario.events ?? []) if (!eventShapes.has(type)) trace.events[type] = ['(never emitted)'];
  return { trace, topics, groupId, plain: endpoint.plain };
}

function endpointOf(scenario: Scenario, env: Env): Endpoint {
  if (!scenario.security) return env.plaintext;
  const s = env.secure;
  if (!s) throw new Error('the SASL/TLS cluster is not available');
  const alice = s.users[0];
  const ssl = { ca: [s.caPem], servername: 'localhost' };
  switch (scenario.security) {
    case 'sasl-plain':
      return { plain: s.plain, brokers: s.sasl, client: { sasl: { mechanism: 'plain', username: alice.username, password: alice.password } } };
    case 'sasl-scram-256':
      return { plain: s.plain, brokers: s.sasl, client: { sasl: { mechanism: 'scram-sha-256', username: alice.username, password: alice.password } } };
    case 'sasl-scram-512':
      return { plain: s.plain, brokers: s.sasl, client: { sasl: { mechanism: 'scram-sha-512', username: alice.username, password: alice.password } } };
    case 'ssl':
      return { plain: s.plain, brokers: s.ssl, client: { ssl } };
    case 'sasl-ssl':
      if (!s.saslSsl) throw new Error('the cluster has no SASL_SSL listener');
      return { plain: s.plain, brokers: s.saslSsl, client: { ssl, sasl: { mechanism: 'scram-sha-512', username: alice.username, password: alice.password } } };
    case 'oauthbearer':
      return {
        plain: s.plain,
        brokers: s.sasl,
        client: { sasl: { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: unsecuredJwt('alice') }) } },
      };
  }
}

/** An unsigned JWT ("alg": "none"), which Kafka's unsecured OAUTHBEARER validator accepts. */
function unsecuredJwt(sub: string): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'none' })}.${b64({ sub, iat: now, exp: now + 3600 })}.`;
}

/** Classes a cause chain is compared by: kafkajs's and JavaScript's own (the application's errors). */
const COMPARED_CAUSE = /^(KafkaJS\w*|Error|TypeError|RangeError|SyntaxError|ReferenceError)$/;

/**
 * "Name[class](retriable=x) <- CauseName[class](retriable=y)": what code that catches by class or
 * name sees. A cause of another library's class (kwire's own error under a KafkaJS one, where
 * kafkajs has none) ends the chain: see allowed-differences.md, "causes".
 */
export function describeError(e: unknown): string {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let depth = 0; cur && depth < 5; depth++) {
    const err = cur as { name?: unknown; retriable?: unknown; cause?: unknown; type?: unknown; code?: unknown; constructor?: { name?: string } };
    const cls = err.constructor?.name ?? '?';
    if (depth > 0 && !COMPARED_CAUSE.test(cls)) break;
    // KafkaJSProtocolError's type and code: what code that branches on the broker's error reads.
    const protocol = typeof err.type === 'string' ? ` type=${err.type} code=${String(err.code)}` : '';
    parts.push(`${String(err.name)}[${cls}](retriable=${String(err.retriable)}${protocol})`);
    cur = err.cause;
  }
  return parts.join(' <- ');
}

/** A gate a handler can wait on while the script acts (stop, seek, pause) at a known record. */
export function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => {
    open = r;
  });
  return { wait, open };
}

// ---- comparison ----

/** The trace as lines, in an order that is itself deterministic: what the diff works on. */
export function traceLines(t: Trace): string[] {
  const lines: string[] = [];
  for (const k of Object.keys(t.records).sort()) for (const [i, r] of t.records[k].entries()) lines.push(`record ${k} #${i}: ${r}`);
  for (const k of Object.keys(t.events).sort()) for (const s of t.events[k]) lines.push(`event ${k}: ${s}`);
  for (const n of t.notes) lines.push(`note: ${n}`);
  for (const k of Object.keys(t.committed).sort()) lines.push(`committed ${k}: ${t.committed[k]}`);
  return lines;
}

/**
 * Differences between two traces after the scenario's tolerated ones are taken out; each as
 * "- kafkajs line" / "+ kwire line". Empty when they agree.
 */
export function compareTraces(scenario: Scenario, reference: Trace, facade: Trace): string[] {
  const allow = new Set(scenario.allow ?? []);
  const a = { ...reference, committed: { ...reference.committed } };
  const b = { ...facade, committed: { ...facade.committed } };
  const tolerated: string[] = [];
  if (allow.has('commit-less')) {
    for (const k of new Set([...Object.keys(a.committed), ...Object.keys(b.committed)])) {
      const ra = a.committed[k] ?? '-';
      const rb = b.committed[k] ?? '-';
      if (ra !== rb && (rb === '-' || (ra !== '-' && BigInt(rb) < BigInt(ra)))) {
        tolerated.push(`committed ${k}: kafkajs ${ra}, kwire ${rb} (commit-less)`);
        b.committed[k] = ra;
      }
    }
  }
  return diffLines(traceLines(a), traceLines(b));
}

/** A line diff (LCS) showing only the changed lines, with a little context. */
export function diffLines(a: string[], b: string[]): string[] {
  const n = a.length;
  const m = b.length;
  const dp: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) dp[i][j] = a[i] === b[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      i++;
      j++;
    } else if (i < n && (j === m || dp[i + 1][j] >= dp[i][j + 1])) {
      out.push(`- kafkajs ${a[i++]}`);
    } else {
      out.push(`+ kwire   ${b[j++]}`);
    }
  }
  return out;
}
