/**
 * Names a newcomer brings from kafkajs or the Java client, and "did you mean" for near misses: what
 * the configuration (config.ts) and the methods' argument checks (usage.ts) say about a key they do
 * not take. No imports, so that both can use it.
 */

/** What a foreign spelling is in kwire: where it comes from, what to write instead, and the kwire configuration keys named. */
export interface ForeignName {
  /** e.g. "kafkajs's run() option" */
  of: string;
  /** e.g. "set enableAutoCommit: false in createConsumer()'s configuration" */
  use: string;
  /** The configuration keys `use` names (a unit test checks that each exists). */
  config: readonly string[];
}

const IN_CONFIG = "in createConsumer()'s configuration";

function renamed(of: string, key: string, java: string, note = ''): ForeignName {
  return { of, use: `set ${key} (${java}) ${IN_CONFIG}${note}`, config: [key] };
}

const KAFKAJS_CLIENT = "kafkajs's client option";
const KAFKAJS_CONSUMER = "kafkajs's consumer option";
const KAFKAJS_RUN = "kafkajs's run() option";

/**
 * kafkajs's and Java's spellings, by the name written. kafkajs spreads its options over new
 * Kafka(), kafka.consumer(), subscribe() and run(); wherever one of them is met, the advice is the same.
 */
export const FOREIGN_NAMES: Readonly<Record<string, ForeignName>> = {
  // kafkajs: subscribe() and run()
  fromBeginning: {
    of: "kafkajs's subscribe() option",
    use: `set autoOffsetReset: 'earliest' ${IN_CONFIG} (it applies, as fromBeginning did, to partitions without a committed offset; 'latest' is the default)`,
    config: ['autoOffsetReset'],
  },
  partitionsConsumedConcurrently: {
    of: KAFKAJS_RUN,
    use: "give run({ maxConcurrency: N, ordering: 'partition' }) (kafkajs's N partitions at a time, one record of each; 'key' orders by key only and goes further)",
    config: [],
  },
  autoCommit: { of: KAFKAJS_RUN, use: `set enableAutoCommit: false (enable.auto.commit, true by default) ${IN_CONFIG}`, config: ['enableAutoCommit'] },
  autoCommitInterval: renamed(KAFKAJS_RUN, 'autoCommitIntervalMs', 'auto.commit.interval.ms'),
  autoCommitThreshold: {
    of: KAFKAJS_RUN,
    use: 'kwire has no commit threshold: it commits every autoCommitIntervalMs, on rebalance and on close; call commitSync() to commit sooner',
    config: ['autoCommitIntervalMs'],
  },
  restartOnFailure: {
    of: "kafkajs's retry option",
    use: "give run({ onFailure: 'retry' | 'stop' | (error, failure) => 'retry' | 'stop' }) (default 'retry')",
    config: [],
  },
  // kafkajs: new Kafka({ ... })
  brokers: renamed(KAFKAJS_CLIENT, 'bootstrapServers', 'bootstrap.servers', ": 'host:port,host:port' or a list"),
  connectionTimeout: renamed(KAFKAJS_CLIENT, 'socketConnectionSetupTimeoutMs', 'socket.connection.setup.timeout.ms'),
  requestTimeout: renamed(KAFKAJS_CLIENT, 'requestTimeoutMs', 'request.timeout.ms'),
  retry: {
    of: KAFKAJS_CLIENT,
    use: `set retryBackoffMs and retryBackoffMaxMs (retry.backoff.ms, retry.backoff.max.ms) ${IN_CONFIG}; for a handler that throws, run({ onFailure })`,
    config: ['retryBackoffMs', 'retryBackoffMaxMs'],
  },
  logLevel: {
    of: KAFKAJS_CLIENT,
    use: `set logger: consoleLogger('debug' | 'info' | 'warn' | 'error') ${IN_CONFIG} (the default logs warn and error; silentLogger logs nothing)`,
    config: ['logger'],
  },
  logCreator: {
    of: KAFKAJS_CLIENT,
    use: `set logger ${IN_CONFIG}: an object with debug, info, warn and error methods taking (message, fields)`,
    config: ['logger'],
  },
  // kafkajs: kafka.consumer({ ... })
  sessionTimeout: renamed(KAFKAJS_CONSUMER, 'sessionTimeoutMs', 'session.timeout.ms'),
  heartbeatInterval: renamed(KAFKAJS_CONSUMER, 'heartbeatIntervalMs', 'heartbeat.interval.ms'),
  rebalanceTimeout: renamed(KAFKAJS_CONSUMER, 'maxPollIntervalMs', 'max.poll.interval.ms', ': it is sent as the rebalance timeout, as the Java client does'),
  metadataMaxAge: renamed(KAFKAJS_CONSUMER, 'metadataMaxAgeMs', 'metadata.max.age.ms'),
  maxBytesPerPartition: renamed(KAFKAJS_CONSUMER, 'maxPartitionFetchBytes', 'max.partition.fetch.bytes'),
  maxBytes: renamed(KAFKAJS_CONSUMER, 'fetchMaxBytes', 'fetch.max.bytes'),
  minBytes: renamed(KAFKAJS_CONSUMER, 'fetchMinBytes', 'fetch.min.bytes'),
  maxWaitTimeInMs: renamed(KAFKAJS_CONSUMER, 'fetchMaxWaitMs', 'fetch.max.wait.ms'),
  readUncommitted: {
    of: KAFKAJS_CONSUMER,
    use: `set isolationLevel (isolation.level) ${IN_CONFIG}: 'read_uncommitted' (kwire's default) or 'read_committed' (kafkajs's default)`,
    config: ['isolationLevel'],
  },
  rackId: renamed(KAFKAJS_CONSUMER, 'clientRack', 'client.rack'),
  partitionAssigners: renamed(KAFKAJS_CONSUMER, 'partitionAssignmentStrategy', 'partition.assignment.strategy', ": assignor names ('range', 'roundrobin', 'sticky', 'cooperative-sticky') or objects"),
  allowAutoTopicCreation: { of: KAFKAJS_CONSUMER, use: 'kwire never asks the broker to create a topic: create it before consuming', config: [] },
  // Java settings kwire does not have
  'allow.auto.create.topics': { of: 'a Java consumer setting', use: 'kwire never asks the broker to create a topic: create it before consuming', config: [] },
  allowAutoCreateTopics: { of: 'a Java consumer setting', use: 'kwire never asks the broker to create a topic: create it before consuming', config: [] },
  'default.api.timeout.ms': { of: 'a Java consumer setting', use: 'give { timeoutMs } to offsetsForTimes(), beginningOffsets(), endOffsets() and close()', config: [] },
  defaultApiTimeoutMs: { of: 'a Java consumer setting', use: 'give { timeoutMs } to offsetsForTimes(), beginningOffsets(), endOffsets() and close()', config: [] },
};

/** Lower case, without the separators of camelCase, dotted, snake and kebab spellings. */
function normalized(name: string): string {
  return name.toLowerCase().replace(/[._\-\s]/g, '');
}

/** Edit distance with adjacent transpositions (optimal string alignment): "grupId" is 1 from "groupId". */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row = new Array<number>(b.length + 1);
    row[0] = i;
    rows.push(row);
  }
  for (let j = 0; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The candidate `name` most likely meant, or undefined: the same name in another case or
 * separator style, else the nearest within a distance that grows with the name's length (1 up to
 * 4 letters, 2 up to 8, then 3), so that short names are not matched to anything.
 */
export function nearest(name: string, candidates: Iterable<string>): string | undefined {
  const n = normalized(name);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    if (c === name) continue;
    const m = normalized(c);
    const d = editDistance(n, m);
    const limit = Math.max(n.length, m.length) <= 4 ? 1 : Math.max(n.length, m.length) <= 8 ? 2 : 3;
    if (d <= limit && d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/** The kafkajs or Java spelling `name` is, if it is one. */
export function foreignName(name: string): ForeignName | undefined {
  return Object.hasOwn(FOREIGN_NAMES, name) ? FOREIGN_NAMES[name] : undefined;
}

/** ": it is kafkajs's run() option: set ..." for a foreign spelling, ": did you mean X?" for a near miss, else "". */
export function hintFor(name: string, candidates: Iterable<string>, show: (candidate: string) => string = (c) => c): string {
  const foreign = foreignName(name);
  if (foreign) return `: it is ${foreign.of}: ${foreign.use}`;
  const near = nearest(name, candidates);
  return near === undefined ? '' : `: did you mean ${show(near)}?`;
}
