// The OpenTelemetry metrics bridge. @opentelemetry/api is an optional peer: nothing here imports
// it statically (the types below are structural, so a Meter of any 1.x API fits them), and
// openTelemetryMeter() loads it only when called. The library imports and runs without it.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { ConfigError } from '../errors.js';
import type { ConsumerMetrics, ShareConsumerMetrics } from './types.js';

/** Attribute values as OpenTelemetry takes them. */
export type OtelAttributes = Record<string, string | number | boolean>;

/** What the bridge uses of an OpenTelemetry Meter (@opentelemetry/api's Meter has all of it). */
export interface OtelMeter {
  createHistogram(name: string, options?: OtelInstrumentOptions): { record(value: number, attributes?: OtelAttributes): void };
  createObservableCounter(name: string, options?: OtelInstrumentOptions): object;
  createObservableGauge(name: string, options?: OtelInstrumentOptions): object;
  addBatchObservableCallback(callback: (result: { observe(observable: object, value: number, attributes?: OtelAttributes): void }) => void, observables: object[]): void;
  removeBatchObservableCallback(callback: (result: { observe(observable: object, value: number, attributes?: OtelAttributes): void }) => void, observables: object[]): void;
}

export interface OtelInstrumentOptions {
  description?: string;
  unit?: string;
}

export interface OpenTelemetryBridgeOptions {
  /** The meter to create the instruments on: `metrics.getMeter(...)`, or `await openTelemetryMeter()`. */
  meter: OtelMeter;
  /**
   * Attributes on every measurement, after the bridge's own (messaging.system "kafka",
   * messaging.client.id, and messaging.consumer.group.name for a group member).
   */
  attributes?: OtelAttributes;
  /** Instrument names start with this (default "kwire.consumer", "kwire.share_consumer" for a ShareConsumer). */
  prefix?: string;
}

/**
 * What the bridge reads of a Consumer: its metrics() and the configuration fields of the base
 * attributes (structural, so that the metrics layer never imports the consumer classes). The
 * consumer itself is also what its diagnostics_channel messages carry, to tell them apart.
 */
export interface MeteredConsumer {
  readonly config: { readonly clientId: string; readonly groupId?: string | null };
  metrics(): ConsumerMetrics;
}

/** What the bridge reads of a ShareConsumer: the same, and acknowledge(), which only a share group member has. */
export interface MeteredShareConsumer {
  readonly config: { readonly clientId: string; readonly groupId?: string | null };
  metrics(): ShareConsumerMetrics;
  acknowledge(...args: never[]): unknown;
}

export interface OpenTelemetryBridge {
  /** Stops publishing: the observable callback is removed and the channels are left. */
  close(): void;
}

/**
 * A Meter from the installed @opentelemetry/api (its global MeterProvider), loaded on this call.
 * Rejects with a ConfigError naming the package when it is not installed.
 */
export async function openTelemetryMeter(name = '@kwire/consumer', version?: string): Promise<OtelMeter> {
  // A variable, so that bundlers and TypeScript leave the optional peer alone.
  const specifier = '@opentelemetry/api';
  let api: { metrics: { getMeter(name: string, version?: string): OtelMeter } };
  try {
    api = (await import(specifier)) as typeof api;
  } catch (err) {
    throw new ConfigError(`the OpenTelemetry bridge needs @opentelemetry/api (npm install @opentelemetry/api), or a meter passed to bridgeOpenTelemetry: ${(err as Error).message}`);
  }
  return api.metrics.getMeter(name, version);
}

interface BatchMessage {
  consumer: unknown;
  topic: string;
  partition: number;
  records: number;
  brokerWaitMs: number;
  bufferedMs: number;
}

/**
 * Publishes a consumer's metrics as OpenTelemetry instruments on `meter`:
 *
 *   const bridge = bridgeOpenTelemetry(consumer, { meter: await openTelemetryMeter() });
 *   ...
 *   bridge.close();
 *
 * Observed at each collection from consumer.metrics() (one call per collection): counters of
 * records consumed, bytes fetched, fetches and fetch errors, commits, commit failures and
 * rebalances; gauges of the consumed rates (Java's records-consumed-rate and bytes-consumed-rate),
 * per-partition lag (records-lag, attributes messaging.destination.name and
 * messaging.destination.partition.id) and its maximum, buffered bytes, assigned partitions and the
 * time since the last heartbeat. Recorded as they happen, from the consumer's diagnostics_channel
 * messages, as histograms in milliseconds: a record's broker wait, its time buffered in kwire and
 * in the application (once per batch, by its first record, as metrics() counts them; attribute
 * messaging.destination.name), successful commits' duration and rebalances' duration.
 */
export function bridgeOpenTelemetry(consumer: MeteredConsumer | MeteredShareConsumer, options: OpenTelemetryBridgeOptions): OpenTelemetryBridge {
  const share = isShareConsumer(consumer);
  const { meter, base, counter, gauge, histogram } = instrumentsOf(options, share ? 'kwire.share_consumer' : 'kwire.consumer', consumer.config);
  if (share) return bridgeShareConsumer(consumer, meter, base, counter, gauge);

  const recordsConsumed = counter('records.consumed', 'Records delivered to the application.', '{record}');
  const bytesFetched = counter('bytes.fetched', 'Record bytes fetched.', 'By');
  const fetches = counter('fetches', 'Fetch requests sent.', '{request}');
  const fetchErrors = counter('fetch.errors', 'Fetches that failed.', '{request}');
  const commits = counter('commits', 'Commits attempted.', '{commit}');
  const commitFailures = counter('commit.failures', 'Commits that failed.', '{commit}');
  const rebalances = counter('rebalances', 'Rebalances that ended with an assignment.', '{rebalance}');
  const recordsRate = gauge('records.consumed.rate', 'Records delivered per second over the last 30 s (records-consumed-rate).', '{record}/s');
  const bytesRate = gauge('bytes.consumed.rate', 'Record bytes fetched per second over the last 30 s (bytes-consumed-rate).', 'By/s');
  const recordsLag = gauge('records.lag', 'Records between the position and the end of the partition (records-lag).', '{record}');
  const recordsLagMax = gauge('records.lag.max', 'The largest records.lag; -1 while none is known (records-lag-max).', '{record}');
  const bufferedBytes = gauge('buffered.bytes', 'Fetched bytes not yet released by the application.', 'By');
  const assignedPartitions = gauge('assigned.partitions', 'Partitions assigned.', '{partition}');
  const heartbeatAge = gauge('heartbeat.age', 'Milliseconds since a heartbeat last succeeded.', 'ms');
  const inFlight = gauge('records.in_flight', 'Records whose run() callback is running.', '{record}');
  const skipped = counter('records.skipped', "Records set aside by onFailure 'skip'.", '{record}');
  const retried = counter('records.retried', "Failed records handled again ('retry').", '{record}');
  const alreadyFinished = counter('records.already_finished', 'Records not handled again because the commit metadata (or an earlier delivery) had them finished.', '{record}');
  const unfinishedSpan = gauge('unfinished.span', "Records from a partition's first unfinished one to its last one dispatched to run().", '{record}');
  const metadataBytes = gauge('commit.metadata.size', "Bytes of a partition's last commit metadata (records finished beyond the commit point).", 'By');
  const keyWaitP99 = gauge('record.key_wait.p99', 'The 99th percentile of how long recent records waited behind their key before their callback started.', 'ms');
  const observables = [
    inFlight,
    skipped,
    retried,
    alreadyFinished,
    unfinishedSpan,
    metadataBytes,
    keyWaitP99,
    recordsConsumed,
    bytesFetched,
    fetches,
    fetchErrors,
    commits,
    commitFailures,
    rebalances,
    recordsRate,
    bytesRate,
    recordsLag,
    recordsLagMax,
    bufferedBytes,
    assignedPartitions,
    heartbeatAge,
  ];

  const observe: Parameters<OtelMeter['addBatchObservableCallback']>[0] = (result) => {
    const m = consumer.metrics();
    result.observe(recordsConsumed, m.recordsConsumed, base);
    result.observe(bytesFetched, m.bytesFetched, base);
    result.observe(fetches, m.fetches, base);
    result.observe(fetchErrors, m.fetchErrors, base);
    result.observe(recordsRate, m.recordsConsumedRate, base);
    result.observe(bytesRate, m.bytesConsumedRate, base);
    result.observe(recordsLagMax, m.recordsLagMax, base);
    result.observe(bufferedBytes, m.bufferedBytes, base);
    result.observe(assignedPartitions, m.assignedPartitions, base);
    const ofPartition = (tp: string) => {
      const i = tp.lastIndexOf('-');
      return { ...base, 'messaging.destination.name': tp.slice(0, i), 'messaging.destination.partition.id': tp.slice(i + 1) };
    };
    for (const [tp, lag] of Object.entries(m.recordsLag)) result.observe(recordsLag, lag, ofPartition(tp));
    const p = m.processing;
    result.observe(inFlight, p.inFlight, base);
    result.observe(skipped, p.skipped, base);
    result.observe(retried, p.retried, base);
    result.observe(alreadyFinished, p.alreadyFinished, base);
    result.observe(keyWaitP99, p.keyWait.p99Ms, base);
    for (const [tp, n] of Object.entries(p.unfinishedSpan)) result.observe(unfinishedSpan, n, ofPartition(tp));
    for (const [tp, n] of Object.entries(p.commitMetadataBytes)) result.observe(metadataBytes, n, ofPartition(tp));
    if (m.group) {
      result.observe(commits, m.group.commits, base);
      result.observe(commitFailures, m.group.commitFailures, base);
      result.observe(rebalances, m.group.rebalances, base);
      if (m.group.sinceLastHeartbeatMs !== undefined) result.observe(heartbeatAge, m.group.sinceLastHeartbeatMs, base);
    }
  };
  meter.addBatchObservableCallback(observe, observables);

  const brokerWait = histogram('record.broker_wait', "From a record's timestamp to its arrival in kwire (per batch, by its first record).");
  const buffered = histogram('record.buffered', 'From arrival in kwire to delivery to the application (per batch).');
  const processing = histogram('record.processing', 'From delivery to release by the application (per batch).');
  const commitDuration = histogram('commit.duration', 'Successful commits from request to answer.');
  const rebalanceDuration = histogram('rebalance.duration', 'From the start of a rebalance to its assignment.');
  const ofTopic = attributesWith(base, 'messaging.destination.name');
  // The channels are the process's: keep only this consumer's messages.
  const listeners: [string, (message: unknown) => void][] = [
    [
      'kwire:consumer:batch',
      (message) => {
        const m = message as BatchMessage;
        if (m.consumer !== consumer) return;
        brokerWait.record(m.brokerWaitMs, ofTopic(m.topic));
        buffered.record(m.bufferedMs, ofTopic(m.topic));
      },
    ],
    [
      'kwire:consumer:release',
      (message) => {
        const m = message as { consumer: unknown; topic: string; processingMs: number };
        if (m.consumer === consumer) processing.record(m.processingMs, ofTopic(m.topic));
      },
    ],
    [
      'kwire:consumer:commit',
      (message) => {
        const m = message as { consumer: unknown; durationMs: number; error?: Error };
        if (m.consumer === consumer && !m.error) commitDuration.record(m.durationMs, base);
      },
    ],
    [
      'kwire:consumer:rebalance',
      (message) => {
        const m = message as { consumer: unknown; durationMs: number };
        if (m.consumer === consumer) rebalanceDuration.record(m.durationMs, base);
      },
    ],
  ];
  for (const [name, listener] of listeners) subscribe(name, listener);
  return bridgeClosing(meter, observe, observables, () => {
    for (const [name, listener] of listeners) unsubscribe(name, listener);
  });
}

/** A share group member: the one of the two that acknowledges records (KIP-932). */
function isShareConsumer(consumer: MeteredConsumer | MeteredShareConsumer): consumer is MeteredShareConsumer {
  return typeof (consumer as Partial<MeteredShareConsumer>).acknowledge === 'function';
}

/** `base` plus `name` set to a value, one object per value (made once, not per measurement). */
function attributesWith(base: OtelAttributes, name: string): (value: string) => OtelAttributes {
  const made = new Map<string, OtelAttributes>();
  return (value) => {
    let a = made.get(value);
    if (a === undefined) made.set(value, (a = { ...base, [name]: value }));
    return a;
  };
}

type Instrument = (name: string, description: string, unit: string) => object;

/** What both bridges start from: the checked meter, the attributes of every point, instrument makers. */
function instrumentsOf(options: OpenTelemetryBridgeOptions, defaultPrefix: string, config: { readonly clientId: string; readonly groupId?: string | null }) {
  const { meter } = options;
  if (typeof meter?.createHistogram !== 'function' || typeof meter.addBatchObservableCallback !== 'function') {
    throw new ConfigError('bridgeOpenTelemetry needs { meter }: an OpenTelemetry Meter (metrics.getMeter(...), or await openTelemetryMeter())');
  }
  const prefix = options.prefix ?? defaultPrefix;
  const { clientId, groupId } = config;
  const base: OtelAttributes = { 'messaging.system': 'kafka', 'messaging.client.id': clientId, ...(groupId ? { 'messaging.consumer.group.name': groupId } : {}), ...options.attributes };
  const counter: Instrument = (name, description, unit) => meter.createObservableCounter(`${prefix}.${name}`, { description, unit });
  const gauge: Instrument = (name, description, unit) => meter.createObservableGauge(`${prefix}.${name}`, { description, unit });
  const histogram = (name: string, description: string) => meter.createHistogram(`${prefix}.${name}`, { description, unit: 'ms' });
  return { meter, base, counter, gauge, histogram };
}

/**
 * A share group member's metrics (ShareConsumer.metrics(), one call per collection): counters of
 * records acquired, redeliveries, acknowledgements (by `kwire.acknowledge.type`), acknowledgement
 * errors, lock expiries, ShareFetch requests, share session resets and heartbeats; gauges of the
 * records held and not settled, the assigned partitions and the member epoch. A share consumer
 * sends no diagnostics_channel messages, so there are no histograms.
 */
function bridgeShareConsumer(consumer: MeteredShareConsumer, meter: OtelMeter, base: OtelAttributes, counter: Instrument, gauge: Instrument): OpenTelemetryBridge {
  // Each instrument with the figure of metrics() it shows (every point with the base attributes).
  const shown: [object, (m: ShareConsumerMetrics) => number][] = [
    [counter('records.acquired', 'Records acquired from the share group (each delivery counts).', '{record}'), (m) => m.recordsAcquired],
    [counter('redeliveries', 'Records acquired with a delivery count above 1.', '{record}'), (m) => m.redeliveries],
    [counter('acknowledgement.errors', 'Records whose acknowledgement the broker refused.', '{record}'), (m) => m.acknowledgementErrors],
    [counter('lock.expired', 'Records settled after their acquisition lock ran out (not sent: the broker had taken them back).', '{record}'), (m) => m.lockExpired],
    [counter('fetches', 'ShareFetch requests sent.', '{request}'), (m) => m.fetches],
    [counter('session.resets', 'Share sessions started again after an error.', '{session}'), (m) => m.sessionResets],
    [counter('heartbeats', 'ShareGroupHeartbeat requests answered.', '{heartbeat}'), (m) => m.heartbeats],
    [gauge('outstanding', 'Records acquired and not settled yet (held by the application or queued).', '{record}'), (m) => m.outstanding],
    [gauge('assigned.partitions', 'Partitions assigned to this member.', '{partition}'), (m) => m.assignedPartitions],
    [gauge('member.epoch', "The member's epoch in the share group (0 before it joined).", '{epoch}'), (m) => m.memberEpoch],
  ];
  const acknowledgements = counter('acknowledgements', 'Records acknowledged, by kwire.acknowledge.type (accept, release, reject, gap, renew).', '{record}');
  const observables = [...shown.map(([instrument]) => instrument), acknowledgements];
  // One attribute set per acknowledgement type, for the types metrics().acknowledged has.
  const ofType = attributesWith(base, 'kwire.acknowledge.type');
  const observe: Parameters<OtelMeter['addBatchObservableCallback']>[0] = (result) => {
    const m = consumer.metrics();
    for (const [instrument, figure] of shown) result.observe(instrument, figure(m), base);
    for (const [type, n] of Object.entries(m.acknowledged)) result.observe(acknowledgements, n, ofType(type));
  };
  meter.addBatchObservableCallback(observe, observables);
  return bridgeClosing(meter, observe, observables);
}

/** The bridge handed out: close() (once) removes the observable callback, then runs `also`. */
function bridgeClosing(meter: OtelMeter, observe: Parameters<OtelMeter['addBatchObservableCallback']>[0], observables: object[], also?: () => void): OpenTelemetryBridge {
  let closed = false;
  return {
    close() {
      if (closed) return;
      closed = true;
      meter.removeBatchObservableCallback(observe, observables);
      also?.();
    },
  };
}
