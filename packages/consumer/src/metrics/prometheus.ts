import type { LatencySummary } from './latency.js';
import type { ConsumerMetrics, ShareConsumerMetrics } from './types.js';

/**
 * consumer.metrics() in the Prometheus text exposition format (version 0.0.4), for a /metrics
 * endpoint: counters, gauges, per-partition lag, and the latency summaries as quantiles. A share
 * consumer's metrics() (ShareConsumerMetrics) give its counters and gauges instead, named
 * kwire_share_consumer_* unless `prefix` says otherwise.
 *
 *   http.createServer((req, res) => res.end(prometheusText(consumer.metrics(), { client: 'billing' })));
 */
export function prometheusText(m: ConsumerMetrics | ShareConsumerMetrics, labels: Readonly<Record<string, string>> = {}, prefix?: string): string {
  if (isShareMetrics(m)) return shareText(m, writer(labels, prefix ?? 'kwire_share_consumer'));
  return consumerText(m, writer(labels, prefix ?? 'kwire_consumer'));
}

/** ShareConsumerMetrics, told apart by what only a share consumer counts. */
function isShareMetrics(m: ConsumerMetrics | ShareConsumerMetrics): m is ShareConsumerMetrics {
  return 'recordsAcquired' in m;
}

type Sample = [suffix: string, labels: [string, string][], value: number];

/** Lines of one exposition: each metric's HELP and TYPE, then its samples with the base labels. */
function writer(labels: Readonly<Record<string, string>>, prefix: string) {
  const out: string[] = [];
  const base = Object.entries(labels);
  const fmt = (extra: [string, string][] = []) => {
    const all = [...base, ...extra];
    return all.length ? `{${all.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}` : '';
  };
  const metric = (name: string, type: 'counter' | 'gauge' | 'summary', help: string, samples: Sample[]) => {
    out.push(`# HELP ${prefix}_${name} ${help}`, `# TYPE ${prefix}_${name} ${type}`);
    for (const [suffix, extra, value] of samples) out.push(`${prefix}_${name}${suffix}${fmt(extra)} ${Number.isFinite(value) ? value : 0}`);
  };
  const summary = (name: string, help: string, s: LatencySummary) =>
    metric(name, 'summary', help, [
      ['', [['quantile', '0.5']], s.p50Ms],
      ['', [['quantile', '0.9']], s.p90Ms],
      ['', [['quantile', '0.99']], s.p99Ms],
      ['_sum', [], s.avgMs * s.count],
      ['_count', [], s.count],
    ]);
  return { metric, summary, text: () => `${out.join('\n')}\n` };
}

type Writer = ReturnType<typeof writer>;

function consumerText(m: ConsumerMetrics, { metric, summary, text }: Writer): string {
  metric('records_consumed_total', 'counter', 'Records delivered to the application.', [['', [], m.recordsConsumed]]);
  metric('records_consumed_rate', 'gauge', 'Records delivered per second over the last 30 s.', [['', [], m.recordsConsumedRate]]);
  metric('bytes_fetched_total', 'counter', 'Record bytes fetched.', [['', [], m.bytesFetched]]);
  metric('bytes_consumed_rate', 'gauge', 'Record bytes fetched per second over the last 30 s.', [['', [], m.bytesConsumedRate]]);
  metric('fetches_total', 'counter', 'Fetch requests sent.', [['', [], m.fetches]]);
  metric('fetch_errors_total', 'counter', 'Fetches that failed.', [['', [], m.fetchErrors]]);
  metric('buffered_bytes', 'gauge', 'Fetched bytes not yet released by the application.', [['', [], m.bufferedBytes]]);
  metric('assigned_partitions', 'gauge', 'Partitions assigned.', [['', [], m.assignedPartitions]]);
  metric(
    'records_lag',
    'gauge',
    'Records between the position and the end of each partition.',
    Object.entries(m.recordsLag).map(([tp, lag]) => ['', splitTp(tp), lag]),
  );
  metric('records_lag_max', 'gauge', 'The largest records_lag (-1 when none is known).', [['', [], m.recordsLagMax]]);
  summary('fetch_latency_ms', 'Fetch requests from send to answer.', m.fetchLatency);
  summary('record_broker_wait_ms', "From a record's timestamp to its arrival in kwire (per batch).", m.recordLatency.brokerWait);
  summary('record_buffered_ms', 'From arrival to delivery to the application (per batch).', m.recordLatency.buffered);
  summary('record_processing_ms', 'From delivery to release by the application (per batch).', m.recordLatency.processing);
  const p = m.processing;
  metric('records_in_flight', 'gauge', 'Records whose run() callback is running.', [['', [], p.inFlight]]);
  metric('records_finished_total', 'counter', 'Records whose run() callback resolved (set aside ones included).', [['', [], p.finished]]);
  metric('records_skipped_total', 'counter', "Records set aside by onFailure 'skip'.", [['', [], p.skipped]]);
  metric('records_retried_total', 'counter', "Failed records handled again ('retry').", [['', [], p.retried]]);
  metric('records_already_finished_total', 'counter', 'Records not handled again because the commit metadata (or an earlier delivery) had them finished.', [['', [], p.alreadyFinished]]);
  metric(
    'unfinished_span',
    'gauge',
    "Records from each partition's first unfinished one to its last one dispatched to run().",
    Object.entries(p.unfinishedSpan).map(([tp, n]) => ['', splitTp(tp), n]),
  );
  metric(
    'commit_metadata_bytes',
    'gauge',
    "Bytes of each partition's last commit metadata (records finished beyond the commit point).",
    Object.entries(p.commitMetadataBytes).map(([tp, n]) => ['', splitTp(tp), n]),
  );
  summary('record_key_wait_ms', 'How long a record waited behind its key (or partition) before its callback started.', p.keyWait);
  if (m.group) {
    metric('commits_total', 'counter', 'Commits attempted.', [['', [], m.group.commits]]);
    metric('commit_failures_total', 'counter', 'Commits that failed.', [['', [], m.group.commitFailures]]);
    summary('commit_latency_ms', 'Successful commits from request to answer.', m.group.commitLatency);
    metric('rebalances_total', 'counter', 'Rebalances that ended with an assignment.', [['', [], m.group.rebalances]]);
    summary('rebalance_latency_ms', 'From the start of a rebalance to the assignment.', m.group.rebalanceLatency);
    metric('last_heartbeat_seconds_ago', 'gauge', 'Seconds since a heartbeat last succeeded.', [['', [], (m.group.sinceLastHeartbeatMs ?? 0) / 1000]]);
  }
  return text();
}

function shareText(m: ShareConsumerMetrics, { metric, text }: Writer): string {
  const single: [name: string, type: 'counter' | 'gauge', help: string, value: number][] = [
    ['records_acquired_total', 'counter', 'Records acquired from the share group (each delivery counts).', m.recordsAcquired],
    ['redeliveries_total', 'counter', 'Records acquired with a delivery count above 1.', m.redeliveries],
    ['acknowledgement_errors_total', 'counter', 'Records whose acknowledgement the broker refused.', m.acknowledgementErrors],
    ['lock_expired_total', 'counter', 'Records settled after their acquisition lock ran out (not sent).', m.lockExpired],
    ['fetches_total', 'counter', 'ShareFetch requests sent.', m.fetches],
    ['session_resets_total', 'counter', 'Share sessions started again after an error.', m.sessionResets],
    ['heartbeats_total', 'counter', 'ShareGroupHeartbeat requests answered.', m.heartbeats],
    ['outstanding_records', 'gauge', 'Records acquired and not settled yet.', m.outstanding],
    ['assigned_partitions', 'gauge', 'Partitions assigned to this member.', m.assignedPartitions],
    ['member_epoch', 'gauge', "The member's epoch in the share group (0 before it joined).", m.memberEpoch],
  ];
  for (const [name, type, help, value] of single) metric(name, type, help, [['', [], value]]);
  metric(
    'acknowledgements_total',
    'counter',
    'Records acknowledged, by type.',
    Object.entries(m.acknowledged).map(([type, n]): Sample => ['', [['type', type]], n]),
  );
  return text();
}

function splitTp(tp: string): [string, string][] {
  const i = tp.lastIndexOf('-');
  return [
    ['topic', tp.slice(0, i)],
    ['partition', tp.slice(i + 1)],
  ];
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
