// The Markdown report (packages/bench/results/report.md): the run's context, the goals against
// the measured figures, every table, the chart, the profiles and the notes on method.
import { DEFAULT_VARIANT, warmupSecondsFor } from '../plan.js';
import { bestOf, RANKING_SPREAD, ranking, ratio, ratioToBest } from './summarize.js';
import { HANDLER_HEADERS, HANDLER_RIGHT, handlerCells, int, num, status } from './table.js';
import type { BenchResults, ResultRow } from './types.js';

function mdTable(headers: string[], rows: string[][], right: boolean[] = []): string {
  const sep = headers.map((_, i) => (right[i] ? '---:' : '---'));
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [`| ${headers.join(' | ')} |`, `| ${sep.join(' | ')} |`, ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n');
}

function verifiedCell(r: ResultRow): string {
  const s = status(r);
  return s === 'FAILED' ? `**FAILED**` : s;
}

function x(n: number | null): string {
  return n === null ? '-' : `${n.toFixed(2)}x`;
}

/** Whether a throughput scenario ranks the clients, in words (issue 32). */
function rankingLine(rows: readonly ResultRow[], scenario: string): string {
  const k = ranking(rows, scenario);
  if (k.ranks) return `Ranks: kwire's row and each peer's best spread at most ${RANKING_SPREAD * 100}%.`;
  return `**Not ranking**: spread above ${RANKING_SPREAD * 100}% in ${k.over.map((o) => `${o.label} (${(o.spread * 100).toFixed(0)}%)`).join(', ')}; the ratios below are shown, not claimed.`;
}

/** The spread of a row's repetitions: min-max and (max - min) / median. */
export function spreadCell(r: ResultRow): string {
  const v = r.runsRecordsPerSec.filter((n): n is number => typeof n === 'number');
  if (v.length < 2) return v.length ? `${int(v[0]!)} (1 run)` : '-';
  return `${int(Math.min(...v))}-${int(Math.max(...v))} (${((r.spread ?? 0) * 100).toFixed(0)}%)`;
}

const PEERS: [string, string][] = [
  ['kafkajs', 'kafkajs'],
  ['platformatic', '@platformatic/kafka'],
  ['rdkafka', 'node-rdkafka'],
  ['java', 'Java consumer'],
  ['kcat', 'kcat'],
];

export function markdownReport(results: BenchResults, analysis?: string): string {
  const out: string[] = [];
  const rows = results.results;
  const m = results.machine;
  out.push('# kwire benchmark', '');
  out.push(
    `${results.mode === 'quick' ? 'A quick (smoke) run' : 'A full run'} of \`npm run bench\`${results.mode === 'quick' ? ' -- --quick' : ''}, started ${results.startedAt}, ${Math.round(results.durationSeconds / 60)} minutes.`,
    '',
    `- Machine: ${m.cpus} cores (${m.model}), ${m.memoryGb} GiB, ${m.os} ${m.kernel}. The broker, the client under test and the bench share the cores.`,
    `- Node clients (kwire, kafkajs, @platformatic/kafka, node-rdkafka, the ceiling) run under Node ${results.node.clients}, each in a process of its own; the orchestrator under Node ${results.node.orchestrator}.`,
    `- Broker: Apache Kafka ${results.broker.version}, one KRaft node on loopback (${results.broker.startedByBench ? 'started by the bench' : `given with --bootstrap ${results.broker.bootstrap}`}).`,
    ...(results.heapMiB
      ? [
          `- Service heap (--heap-mib ${results.heapMiB}): in the throughput scenarios each Node client held ${results.heapMiB} MiB of live objects for its whole process, as a service's heap does; the Java consumer and kcat held none.`,
        ]
      : []),
    `- Clients: ${results.clients.map((c) => `${c.label}${c.available ? '' : ` (skipped: ${c.reason ?? ''})`}`).join('; ')}.`,
    '',
  );
  out.push(
    '## How to read this',
    '',
    "- **Steady state.** Every throughput client reads the topic several times in one process (Java: one JVM): warm-up passes, not counted (at least one, and as many more as fill the warm-up time of the scenario when it has one), then the measured passes, each with a consumer of its own (a fresh group where the library needs one). In full runs a topic holds 1 GB of values and a pass ends at the topic's end or 2 s into its fetch phase, whichever comes first (issue 32): every pass lasts 2 s or reads 1 GB. kcat, a C program with nothing to warm, runs once per process, a warm-up run first, stopped by SIGINT at 2 s. **records/s** is the median of the measured passes, **spread** their min-max and (max - min) / median. The ceiling is measured the same way.",
    "- **The same clock.** A pass's fetch phase starts when the client is connected with the topic's metadata, every partition assigned and its position known (kwire: its assign() with offset 0 returned; Java: partitionsFor(), assign() and seek(0) returned, so that no ListOffsets is timed, where before issue 32 Java's clock also ran over its connect, metadata and ListOffsets); the group clients (kafkajs, @platformatic/kafka) from their join; kcat from its spawn. A fresh consumer per pass costs each client its connect before that point, outside the clock.",
    "- **records/s** counts the fetch phase: from the moment the client has its partitions (assign() resolved; group joined for kafkajs and @platformatic/kafka; Java: its seekToBeginning) to the last record delivered. kcat has no assignment to time from: its figure runs from its start. **with join rec/s** counts from the consumer's creation (connect, metadata, group join) to the last record.",
    "- **Each peer at its best.** kafkajs, @platformatic/kafka and node-rdkafka are swept over the settings their users change for throughput (the `setting` column; a variant id is `family@setting`); the goals and the ratio tables compare kwire, at its defaults, with each peer's best setting in that scenario. The Java consumer runs with ConsumerPerformance's settings at --fetch-size 4 MiB (`java@4MiB`; its default 1 MiB was never the better of the two in eight full runs and runs only with `--clients java`); kwire with 4 MiB fetches (`kwire-4mib`) is a row of its own, beside the headline at kwire's defaults.",
    '- **Workloads.** Value-only scenarios (null keys, no headers) read each value and hash its length and first and last 8 bytes. **Full-touch** scenarios (`-full`) hold a 16-byte key and two headers per record, and every client reads the key, the value with every byte hashed, the headers, the offset and the timestamp.',
    "- **x ceiling** divides by the transport ceiling of the same scenario: kwire's transport sending the same Fetch requests a consumer sends (Java's default sizes, one connection) and scanning batch headers only, nothing decoded; on compressed scenarios the decompressing ceiling also decompresses every batch. It is what this broker and machine deliver to one connection asking that way, not a bound on a client that asks differently.",
    "- **CPU s** and **GC ms** are per measured pass (the fetch phase; Java: the JVM's process CPU and collector time over the pass; kcat: its whole process, sampled from /proc). **peak RSS** is the process's maximum resident set over all its passes. **alloc B/rec** is JS heap bytes allocated per record, measured in a separate pass over the middle three fifths of the topic (V8's used heap at both ends plus what each collection in between freed), with a 128 MiB young generation. **max stall ms** is the longest event-loop delay between first and last record (1 ms resolution); **p99 loop ms** the p99 of the event loop's 1 ms timer samples over the same window (issue 16: <= 2 ms).",
    "- **verified**: the client consumed exactly the expected records and its checksum of the values (value-only: length plus a hash of the first and last 8 bytes; full touch: a hash of key, every value byte, headers, offset and timestamp; order-independent) matches the one most clients agree on. Java computes the same digest. kcat prints each value's size: its count and byte total are checked. The ceiling decodes nothing: its count comes from the fetch offsets. A client that falls short or differs is **FAILED**, and its figures are not used.",
    '',
  );

  out.push(
    '## Goals',
    '',
    "Issue 7's goals (the first bench's) and issue 16's (twice the Java consumer on small records, zero allocations per record, no stall an embedding service can feel), each evaluated from the rows below: met, missed by how much, or not measured.",
    '',
  );
  out.push(
    mdTable(
      ['issue', 'goal', 'measured', 'result'],
      results.goals.map((g) => [g.issue ? `#${g.issue}` : '', g.text, g.measured, g.met === true ? 'met' : g.met === false ? `**missed**: ${g.miss ?? ''}` : `n/a: ${g.miss ?? ''}`]),
    ),
    '',
  );

  const tp = rows.filter((r) => r.kind === 'throughput');
  if (tp.length) {
    out.push('## Throughput', '');
    for (const s of results.scenarios.filter((s) => s.kind === 'throughput')) {
      const mine = tp.filter((r) => r.scenario === s.id);
      if (!mine.length) continue;
      out.push(
        `### ${s.title}`,
        '',
        `\`${s.id}\`: ${int(s.records)} records of ${s.recordSize} B (${((s.records * s.recordSize) / 1e9).toFixed(2)} GB of values), ${s.partitions} partition${s.partitions > 1 ? 's' : ''}, ${s.compression}${s.touch === 'full' ? ', keys and headers, **full touch**' : ', value only'}; ${s.warmupPasses ?? 1} warm-up${s.warmupSeconds ? ` (and more until ${warmupSecondsFor(s, 'node')} s have passed; Java ${warmupSecondsFor(s, 'java')} s)` : ''} + ${s.repetitions} measured pass${s.repetitions > 1 ? 'es' : ''} per client${s.passSeconds ? `, each to the topic's end or ${s.passSeconds} s into its fetch phase, whichever comes first (a pass cut at ${s.passSeconds} s is counted, its bytes checked, no checksum)` : ''}.`,
        '',
        rankingLine(rows, s.id),
        '',
      );
      out.push(
        mdTable(
          [
            'client',
            'setting',
            'records/s',
            'spread (min-max)',
            'pass s (min-max)',
            'GB a pass',
            'MiB/s',
            'x ceiling',
            'with join rec/s',
            'CPU s',
            'peak RSS MiB',
            'GC ms',
            'alloc B/rec',
            'max stall ms',
            'p99 loop ms',
            'verified',
          ],
          mine.map((r) => {
            const best = r.family && r.verified && bestOf(rows, s.id, r.family)?.client === r.client && mine.filter((m) => m.family === r.family).length > 1;
            return [
              r.client === 'kwire' ? `**${r.label}**` : r.label,
              `${r.setting ?? ''}${best ? ' **(best)**' : ''}`,
              int(r.recordsPerSec),
              spreadCell(r),
              r.passSeconds ? `${r.passSeconds[0].toFixed(2)}-${r.passSeconds[1].toFixed(2)}${r.cappedPasses ? ` (${r.cappedPasses} cut)` : ''}` : '-',
              r.passBytes ? `${(r.passBytes[0] / 1e9).toFixed(2)}${r.passBytes[1] !== r.passBytes[0] ? `-${(r.passBytes[1] / 1e9).toFixed(2)}` : ''}` : '-',
              num(r.mbPerSec),
              r.ratioToCeiling === null ? '-' : r.ratioToCeiling.toFixed(2),
              int(r.totalRecordsPerSec),
              num(r.cpuSeconds, 2),
              num(r.peakRssMb, 0),
              num(r.gcMs, 0),
              r.allocBytesPerRecord === null ? '-' : int(r.allocBytesPerRecord),
              num(r.maxEventLoopStallMs, 1),
              num(r.p99EventLoopDelayMs, 1),
              verifiedCell(r),
            ];
          }),
          [false, false, true, false, false, true, true, true, true, true, true, true, true, true, true, false],
        ),
        '',
      );
    }
    const ids = results.scenarios.filter((s) => s.kind === 'throughput').map((s) => s.id);
    out.push('### Each peer at its best', '', "Per scenario and peer: the setting that won (highest median records/s), the library's defaults, and kwire at its defaults against the winner.", '');
    const peerRows: string[][] = [];
    for (const id of ids) {
      const kwire = rows.find((r) => r.scenario === id && r.client === 'kwire');
      for (const [family, name] of PEERS) {
        const best = bestOf(rows, id, family);
        const def = rows.find((r) => r.scenario === id && r.client === (DEFAULT_VARIANT[family] ?? family));
        if (!best && !def) continue;
        peerRows.push([
          id,
          name,
          best ? `${best.setting ?? best.label}: ${int(best.recordsPerSec)}` : '-',
          def ? (def.verified ? `${int(def.recordsPerSec)}` : status(def)) : '-',
          kwire?.verified ? int(kwire.recordsPerSec) : '-',
          x(ratioToBest(rows, id, 'kwire', family)),
        ]);
      }
    }
    out.push(
      mdTable(['scenario', 'peer', 'best setting: records/s', 'defaults: records/s (platformatic: its default sizes, read_uncommitted)', 'kwire (defaults) records/s', 'kwire / best'], peerRows, [
        false,
        false,
        false,
        true,
        true,
        true,
      ]),
      '',
    );
    out.push("### kwire against the others (ratios of median records/s against each peer's best setting, same run)", '');
    const pct = (r: number | null) => (r === null ? '-' : `${(r * 100).toFixed(0)}%`);
    out.push(
      mdTable(
        [
          'scenario',
          'ranks',
          'vs kafkajs',
          'vs @platformatic/kafka',
          'vs node-rdkafka',
          'vs Java',
          'vs kcat',
          'of the ceiling',
          'of the decompressing ceiling',
          'checkCrcs: false vs default',
          '4 MiB fetches vs default',
        ],
        ids.map((id) => [
          id,
          ranking(rows, id).ranks ? 'yes' : '**no**',
          x(ratioToBest(rows, id, 'kwire', 'kafkajs')),
          x(ratioToBest(rows, id, 'kwire', 'platformatic')),
          x(ratioToBest(rows, id, 'kwire', 'rdkafka')),
          x(ratioToBest(rows, id, 'kwire', 'java')),
          x(ratioToBest(rows, id, 'kwire', 'kcat')),
          pct(ratio(rows, id, 'kwire', 'ceiling')),
          pct(ratio(rows, id, 'kwire', 'ceiling-decompress')),
          x(ratio(rows, id, 'kwire-nocrc', 'kwire')),
          x(ratio(rows, id, 'kwire-4mib', 'kwire')),
        ]),
        [false, false, true, true, true, true, true, true, true, true, true],
      ),
      '',
      `A scenario **ranks** the clients when kwire's row and each peer's best row spread at most ${RANKING_SPREAD * 100}% ((max - min) / median of the measured passes); where one spreads more, its ratios are shown but do not rank (issue 32).`,
      '',
      '![records/s as a ratio to the transport ceiling](chart.svg)',
      '',
    );
  }

  const group = rows.filter((r) => r.kind === 'group');
  if (group.length) {
    const s = results.scenarios.find((x) => x.kind === 'group')!;
    out.push(
      '## Consumer group of 3',
      '',
      `${s.title}: three processes of the same client with one group id, started together; the time runs from the earliest start to the moment every partition's last record was delivered. Records/s = records / that time (group joins and rebalances included). CPU is the three processes together, RSS the largest of them.`,
      '',
    );
    out.push(
      mdTable(
        ['client', 'records/s', 'spread (min-max)', 'seconds', 'CPU s (3 processes)', 'peak RSS MiB', 'records delivered twice', 'verified'],
        group.map((r) => [r.label, int(r.recordsPerSec), spreadCell(r), num(r.totalSeconds, 2), num(r.cpuSeconds, 2), num(r.peakRssMb, 0), int(r.duplicates ?? 0), verifiedCell(r)]),
        [false, true, false, true, true, true, true, false],
      ),
      '',
    );
  }

  const share = rows.filter((r) => r.kind === 'share');
  if (share.length) {
    const first = results.scenarios.find((x) => x.kind === 'share')!;
    out.push(
      '## Share groups (KIP-932)',
      '',
      `Share consumption of the topic of \`${first.topicOf}\` (${int(first.records)} records of ${first.recordSize} B, ${first.partitions} partitions): kwire's \`createShareConsumer\` (implicit acknowledgement, defaults; one process per member) against Kafka's own ShareConsumerPerformance (its defaults; one JVM, \`--threads\` = members). ${first.warmupPasses ?? 1} warm-up + ${first.repetitions} measured passes in the same processes, each pass in a fresh share group that starts at the earliest offset. As the tool counts: from the consumers' creation (the join included) to the last record (the tool: to its last thread's end, which may be one 100 ms poll after the last record with several threads); records/s is the median of the passes, MiB/s of keys and values. kwire is verified offset by offset (every record once across the members, values checked against the topic's checksum); the tool reports only its count and bytes. CPU is all the members' together over the pass.`,
      '',
    );
    out.push(
      mdTable(
        ['scenario', 'members', 'client', 'records/s', 'spread (min-max)', 'MiB/s', 'seconds', 'CPU s', 'GC ms', 'peak RSS MiB', 'verified'],
        share.map((r) => [
          r.scenario,
          String(r.members ?? '-'),
          r.client === 'kwire' ? `**${r.label}**` : 'Java ShareConsumerPerformance',
          int(r.recordsPerSec),
          spreadCell(r),
          num(r.mbPerSec),
          num(r.totalSeconds, 2),
          num(r.cpuSeconds, 2),
          num(r.gcMs, 0),
          num(r.peakRssMb, 0),
          verifiedCell(r),
        ]),
        [false, true, false, true, false, true, true, true, true, true, false],
      ),
      '',
    );
    const ids = [...new Set(share.map((r) => r.scenario))];
    out.push(
      mdTable(
        ['scenario', 'members', 'kwire records/s', 'Java records/s', 'kwire / Java (records/s)', 'kwire MiB/s', 'Java MiB/s'],
        ids.map((id) => {
          const k = share.find((r) => r.scenario === id && r.client === 'kwire');
          const j = share.find((r) => r.scenario === id && r.client === 'java');
          return [
            id,
            String(k?.members ?? j?.members ?? '-'),
            k?.verified ? int(k.recordsPerSec) : '-',
            j?.verified ? int(j.recordsPerSec) : '-',
            x(ratio(rows, id, 'kwire', 'java')),
            k?.verified ? num(k.mbPerSec) : '-',
            j?.verified ? num(j.mbPerSec) : '-',
          ];
        }),
        [false, true, true, true, true, true, true],
      ),
      '',
    );
  }

  const lat = rows.filter((r) => r.kind === 'latency');
  if (lat.length) {
    const s = results.scenarios.find((x) => x.kind === 'latency')!;
    out.push(
      '## End-to-end latency',
      '',
      `${s.title}: ProducerPerformance at ${int(s.rate)} records/s with linger.ms=0 for ${s.seconds} s into a fresh topic while the consumer, with its default fetch settings, reads it. Latency = delivery to the application - the record's CreateTime (set when the producer's send() was called; whole milliseconds, so figures carry up to 1 ms of rounding). The first 2 s of production (the producer JVM warming up) are left out of p50/p99/p999; "p99 with warm-up" keeps them. The transport ceiling row is the latency floor: kwire's protocol layer sending the same Fetch requests back to back and reading only the records' timestamps, so whatever it shows comes from the producer and the broker, not from a consumer.`,
      '',
    );
    out.push(
      mdTable(
        ['client', 'p50 ms', 'p99 ms', 'p99 of each run', 'p999 ms', 'max ms', 'p99 with warm-up', 'records', 'verified'],
        lat.map((r) => [
          r.label,
          num(r.latency?.p50, 2),
          num(r.latency?.p99, 2),
          r.runsValues ? r.runsValues.map((v) => num(v, 2)).join(' / ') : '-',
          num(r.latency?.p999, 2),
          num(r.latency?.max, 2),
          num(r.latency?.p99All, 2),
          int(r.latency?.count),
          verifiedCell(r),
        ]),
        [false, true, true, false, true, true, true, true, false],
      ),
      '',
    );
  }

  const fair = rows.filter((r) => r.kind === 'fairness');
  if (fair.length) {
    const s = results.scenarios.find((x) => x.kind === 'fairness')!;
    out.push(
      '## Latency under load (fairness)',
      '',
      `${s.title}: one consumer at its default settings is assigned a live topic's partition (ProducerPerformance writes ${int(s.rate)} records/s of ${s.recordSize} B, linger.ms=0) and every partition of a backlog topic (${int(s.backlogRecords)} records of ${s.backlogRecordSize} B over ${s.backlogPartitions} partitions), the backlog paused. 2 s after the first live record (a warm-up, left out) plus a few seconds measured "before", the backlog is resumed and drained. Latency = delivery to the application - CreateTime; "before" counts live records produced before the resume, "during" those produced between the resume and the backlog's last record. The goal (issue 16): p99 during <= p99 before + 5 ms.`,
      '',
      mdTable(
        ['client', 'p50 before', 'p99 before', 'p50 during', 'p99 during', 'p99 during, each run', 'max during', 'p99 rise', 'drain s', 'drain records/s', 'verified'],
        fair.map((r) => {
          const f = r.fairness;
          return [
            r.label,
            num(f?.before.p50, 2),
            num(f?.before.p99, 2),
            num(f?.during.p50, 2),
            num(f?.during.p99, 2),
            r.runsValues ? r.runsValues.map((v) => num(v, 2)).join(' / ') : '-',
            num(f?.during.max, 2),
            f ? num(f.during.p99 - f.before.p99, 2) : '-',
            num(f?.drainSeconds, 2),
            int(f?.drainRecordsPerSec),
            verifiedCell(r),
          ];
        }),
        [false, true, true, true, true, false, true, true, true, true, false],
      ),
      '',
    );
    const split = fair.filter((r) => r.fairness?.split);
    if (split.length)
      out.push(
        'Where the "during" latency went (kwire: each record\'s Fetch answer is timed when it is read off the socket, `ConsumerBatch.fetchedAt`; medians over runs of each part apart, so they need not add up). "Until the answer" is the producer, the broker and the network, plus the consumer\'s own event loop until it read the answer: the largest stall of that loop during the drain is beside it.',
        '',
        mdTable(
          [
            'client',
            'p99 during',
            'until the answer: p50',
            'p99',
            'max',
            'in the consumer: p50',
            'p99',
            'max',
            'largest loop stall during the drain, ms',
            'main thread waiting for a CPU, ms/s: before',
            'during',
          ],
          split.map((r) => {
            const x = r.fairness!.split!;
            return [
              r.label,
              num(r.fairness!.during.p99, 2),
              num(x.toAnswer.p50, 2),
              num(x.toAnswer.p99, 2),
              num(x.toAnswer.max, 2),
              num(x.inConsumer.p50, 2),
              num(x.inConsumer.p99, 2),
              num(x.inConsumer.max, 2),
              num(x.maxLoopStallMs, 2),
              x.cpu ? num(x.cpu.before.waitMsPerSec, 0) : '-',
              x.cpu ? num(x.cpu.during.waitMsPerSec, 0) : '-',
            ];
          }),
          [false, true, true, true, true, true, true, true, true, true, true],
        ),
        '',
      );
  }

  const reb = rows.filter((r) => r.kind === 'rebalance');
  if (reb.length) {
    const s = results.scenarios.find((x) => x.kind === 'rebalance')!;
    out.push(
      '## Rebalance time',
      '',
      `${s.title}: a fresh group of one member each time; from subscribe (kwire: createConsumer + subscribe; kafkajs: connect + subscribe + run; platformatic: new Consumer + consume; node-rdkafka: connect + subscribe + consume) to the first record delivered. The Java figure is ConsumerPerformance's rebalance.time.ms: subscribe to partitions assigned, without the first fetch.`,
      '',
    );
    out.push(
      mdTable(
        ['client', 'median ms', 'each run ms', 'repetitions', 'verified'],
        reb.map((r) => [r.label, num(r.joinToFirstRecordMs, 0), r.runsValues ? r.runsValues.map((v) => num(v, 0)).join(' / ') : '-', String(r.repetitions), verifiedCell(r)]),
        [false, true, false, true, false],
      ),
      '',
    );
  }

  for (const kind of ['handler-io', 'handler-cpu'] as const) {
    const h = rows.filter((r) => r.kind === kind);
    if (!h.length) continue;
    const s = results.scenarios.find((x) => x.kind === kind)!;
    out.push(
      kind === 'handler-io' ? '## Handlers that do I/O (issue 31)' : '## Handlers that burn CPU (issue 31)',
      '',
      `${s.title}. Each row is one run in a fresh group, reading the topic from the beginning, stopped at exactly ${int(s.records)} distinct records handled or ${s.timeLimitSeconds} s after its first handler started (then records/s is over that window). Records/s: first handler start to last handler end. Order violations, per key (a key's records sorted by start time): a lower seq after a higher one, plus a start before the key's previous record ended (shown as out of order + overlapping); settings that promise per-key order fail on any. Handler p99: handler start to end (${kind === 'handler-io' ? 'the 5 ms await and what the process adds to it' : 'the 1 ms burn and what the thread adds to it'}). e2e p99: CreateTime to handler end; the topic was loaded once before the family, so this is mostly its age when read, not a client's own latency. Main loop p99: the event loop's delay (monitorEventLoopDelay, 1 ms resolution) from the first handler start to the stop. Heartbeats (kwire): the longest time since a successful heartbeat, sampled every 100 ms, against heartbeat.interval.ms, and rebalances after the first assignment.`,
      '',
      mdTable(
        ['setting', ...HANDLER_HEADERS],
        h.map((r) => [r.setting ?? '', ...handlerCells(r).map((c, i) => (i === HANDLER_HEADERS.length - 1 ? verifiedCell(r) : c))]),
        [false, ...HANDLER_RIGHT],
      ),
      '',
    );
  }

  const soak = rows.filter((r) => r.kind === 'soak');
  if (soak.length) {
    const s = results.scenarios.find((x) => x.kind === 'soak')!;
    out.push('## RSS over a long run', '', `${s.title}: kwire reads the same topic ${s.passes} times over (seeking back to the start), RSS read at the end of each pass.`, '');
    out.push(
      mdTable(
        ['client', 'RSS by pass (MiB)', 'records/s', 'peak RSS MiB', 'verified'],
        soak.map((r) => [r.label, (r.rssByPassMb ?? []).join(', '), int(r.recordsPerSec), num(r.peakRssMb, 0), verifiedCell(r)]),
        [false, false, true, true, false],
      ),
      '',
    );
  }

  if (results.profiles.length) {
    out.push("## Where kwire's time goes (CPU profiles)", '');
    for (const p of results.profiles) {
      out.push(
        `### ${p.scenario}`,
        '',
        `\`${p.file}\`, ${int(p.totalMs)} ms of samples${p.fetchPhaseOnly ? ' in the fetch phase (start-up and module loading left out)' : ''}, idle excluded. Top functions by self time:`,
        '',
      );
      out.push(
        mdTable(
          ['function', 'where', 'self ms', '%'],
          p.top.map((t) => [t.name, t.where, num(t.selfMs, 1), num(t.percent, 1)]),
          [false, false, true, true],
        ),
        '',
      );
      if (p.cpuUserSeconds != null || p.cpuSystemSeconds != null) {
        const u = p.cpuUserSeconds ?? 0;
        const k = p.cpuSystemSeconds ?? 0;
        out.push(`CPU of the profiled run's fetch phase: user ${num(u, 2)} s, system ${num(k, 2)} s (${u + k > 0 ? ((k / (u + k)) * 100).toFixed(0) : '-'}% in the kernel).`, '');
      }
      if (p.perf?.top.length) {
        out.push(
          `\`perf record\` of a second run (\`${p.perf.file}\`, ${int(p.perf.samples)} cpu-clock samples of the whole process, 5 passes over the topic, kernel frames included where perf_event_paranoid allows; JS names from --perf-basic-prof):`,
          '',
        );
        out.push(
          mdTable(
            ['symbol', 'shared object', '%'],
            p.perf.top.map((t) => [t.symbol, t.dso, num(t.percent, 2)]),
            [false, false, true],
          ),
          '',
        );
      } else if (p.perf?.reason) out.push(`No perf record: ${p.perf.reason}.`, '');
    }
  }
  if (analysis?.trim()) out.push('## Analysis', '', analysis.trim(), '');

  const problems = rows.filter((r) => r.status !== 'ok');
  if (problems.length || results.notes.length) {
    out.push('## Notes', '');
    for (const r of problems) out.push(`- ${r.scenario}, ${r.label}: ${r.status === 'failed' ? '**FAILED**' : 'skipped'}${r.reason ? `: ${r.reason}` : ''}`);
    for (const n of results.notes) out.push(`- ${n}`);
    out.push('');
  }
  return out.join('\n');
}
