// kwire consume: read records and print them, from partitions or as a group member.
import { isUtf8 } from 'node:buffer';
import { constants } from 'node:os';
import { parseArgs } from 'node:util';
import { cliSettings } from '../security-properties.js';
import { createConsumer, createShareConsumer, type Consumer, type ConsumerRecord, type Logger, type ShareConsumer, type ShareRecord, type StartOffset, type TopicPartition } from '../index.js';
import { consoleLogger } from '../logger.js';
import { Output, quietStderr } from './output.js';
import { reach, UNREACHABLE_EXIT, UnreachableError } from './reach.js';
import { parseFrom, planStart, type From } from './start-offset.js';
import { tpKey } from '../tp-key.js';

const USAGE = `usage: kwire consume -b HOST:PORT (-t T [-t T2 ...] | --pattern REGEX) [options]

  -b, --bootstrap HOST:PORT[,...]
                                brokers to start from (bootstrap.servers)
  --config FILE                 consumer settings from a Java properties file: any consumer option
                                by its Java name, and security.protocol, sasl.mechanism,
                                sasl.jaas.config (PLAIN, SCRAM), ssl.ca.location,
                                ssl.certificate.location, ssl.key.location (PEM), ssl.key.password
  -X, --set KEY=VALUE           one such setting (repeatable; after --config, so it wins)
  -t, --topic T                 a topic to read (repeatable)
  -p, --partition N             only this partition of each topic (repeatable; not with --group)
  -o, --from WHERE              where to start in each partition (default: auto.offset.reset
                                from --config or -X, else end):
                                  beginning (or earliest)  the start of the log
                                  end (or latest)          the end: only records written from now
                                  -N                       the last N records (-o -10)
                                  OFFSET                   this offset (outside the log: where
                                                           auto.offset.reset says, said on stderr)
                                  2026-12-04T10:30:00Z     the first record at or after a time
                                                           (ISO-8601; without a zone, local time)
                                  @MS                      the same, in ms since the epoch
                                With --group, only beginning and end, for a partition the group
                                has no committed offset for (the others resume from the commit)
  -c, --max-records N           stop after N records
  -e, --exit-at-end             stop once every partition is read up to its end as of the start
                                (not with --group; with -o end there is nothing to read)
  --idle-exit-ms MS             stop after MS without a record
  --connect-timeout MS          give up when the cluster has not answered within MS at the start
                                (default 5000; a refused connection fails at once)
  --format json|value|none      json: one object per line {topic, partition, offset, timestamp,
                                key, value, headers}, key and value as UTF-8 strings where valid,
                                else {"base64": "..."}, offsets as decimal strings; value: the
                                value bytes and a newline; none: nothing (count only). Default json
  --isolation read_committed|read_uncommitted   (default read_uncommitted)
  -G, --group G                 consume as a member of group G (subscribe)
  --pattern REGEX               subscribe to every topic matching REGEX (needs --group)
  --assignor NAME               range|roundrobin|sticky|cooperative-sticky (repeatable; group)
  --protocol classic|consumer   the group protocol (consumer = KIP-848)
  --instance-id ID              static membership (group.instance.id)
  --commit auto|none            commit processed offsets automatically (default auto)
  --share-group G               consume as a member of share group G (KIP-932, queues): records
                                are shared with the group's other members and acknowledged one by
                                one; json lines carry deliveryCount. Not with --group, --partition,
                                --from (a share group's start is its share.auto.offset.reset config);
                                --config and -X apply (share consumer options and security)
  --ack accept|release|reject   how printed records are acknowledged (share groups; default
                                accept). Records not printed (after --max-records) are released
  --debug                       log what the consumer does to stderr
  -h, --help                    this text

A summary goes to stderr at the end; a progress line too when stderr is a terminal. A reader that
goes away (| head) ends the run quietly. Ctrl-C closes the consumer (commits, leaves the group;
at most 5 s, a second Ctrl-C stops at once).
Exit: 0 done, 1 failed, 2 bad arguments, ${UNREACHABLE_EXIT} the cluster could not be reached, 130 Ctrl-C
(SIGINT), 143 SIGTERM.
`;

const HELP_HINT = "run 'kwire consume --help' for the options";
/** How long close() may take after Ctrl-C or SIGTERM. */
const CLOSE_ON_SIGNAL_MS = 5_000;

export interface FormattedRecord {
  topic: string;
  partition: number;
  offset: string;
  timestamp: number;
  key: string | { base64: string } | null;
  value: string | { base64: string } | null;
  headers: { key: string; value: string | { base64: string } | null }[];
}

function bytes(b: Buffer | null): string | { base64: string } | null {
  if (b === null) return null;
  return isUtf8(b) ? b.toString('utf8') : { base64: b.toString('base64') };
}

/** The --format json shape of one record. */
export function formatRecord(r: ConsumerRecord): FormattedRecord {
  return {
    topic: r.topic,
    partition: r.partition,
    offset: r.offset.toString(),
    timestamp: r.timestamp,
    key: bytes(r.key as Buffer | null),
    value: bytes(r.value as Buffer | null),
    headers: r.headers.map((h) => ({ key: h.key, value: bytes(h.value) })),
  };
}

/** A bad argument: one line naming it, then where the options are (exit 2). */
class UsageFailure extends Error {}

function fail(message: string): never {
  throw new UsageFailure(message);
}

const OPTIONS = {
  bootstrap: { type: 'string', short: 'b' },
  topic: { type: 'string', short: 't', multiple: true },
  partition: { type: 'string', short: 'p', multiple: true },
  from: { type: 'string', short: 'o' },
  'max-records': { type: 'string', short: 'c' },
  'exit-at-end': { type: 'boolean', short: 'e' },
  'idle-exit-ms': { type: 'string' },
  'connect-timeout': { type: 'string' },
  format: { type: 'string' },
  isolation: { type: 'string' },
  group: { type: 'string', short: 'G' },
  pattern: { type: 'string' },
  assignor: { type: 'string', multiple: true },
  protocol: { type: 'string' },
  'instance-id': { type: 'string' },
  commit: { type: 'string' },
  'share-group': { type: 'string' },
  ack: { type: 'string' },
  debug: { type: 'boolean' },
  config: { type: 'string' },
  set: { type: 'string', short: 'X', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS }>>['values'];

/** Other tools' spellings of kwire consume's options. */
const FOREIGN: Record<string, string> = {
  '--bootstrap-server': '--bootstrap (-b)',
  '--bootstrap-servers': '--bootstrap (-b)',
  '--broker-list': '--bootstrap (-b)',
  '--brokers': '--bootstrap (-b)',
  '--from-beginning': '--from beginning (-o beginning)',
  '--offset': '--from (-o)',
  '--max-messages': '--max-records (-c)',
  '--count': '--max-records (-c)',
  '--consumer.config': '--config',
  '--consumer-property': '-X KEY=VALUE',
  '--property': '-X KEY=VALUE',
  '--timeout-ms': '--idle-exit-ms',
  '--timeout': '--connect-timeout (reaching the cluster) or --idle-exit-ms (no more records)',
};

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]!;
      row[j] = Math.min(up + 1, row[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length]!;
}

/** What to say about an option kwire consume does not have: its kwire name, or the nearest one. */
function unknownOption(option: string): string {
  const name = option.split('=')[0]!;
  const foreign = FOREIGN[name];
  if (foreign) return `unknown option ${name}: kwire consume says ${foreign}`;
  if (name.startsWith('--')) {
    const near = Object.keys(OPTIONS)
      .map((o) => ({ o, d: distance(name.slice(2), o) }))
      .sort((x, y) => x.d - y.d)[0];
    if (near && near.d <= Math.max(1, Math.floor(near.o.length / 4))) return `unknown option ${name} (did you mean --${near.o}?)`;
  }
  return `unknown option ${name}`;
}

/** parseArgs, with its multi-sentence errors made one line, and -N accepted as a value of --from. */
function parse(argv: string[]): Values {
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    // parseArgs takes a value starting with '-' only attached: -o -10 is -o=-10 (the last ten).
    if ((a === '--from' || a === '-o') && /^-\d+$/.test(argv[i + 1] ?? '')) args.push(`--from=${argv[++i]}`);
    else args.push(a);
  }
  try {
    return parseArgs({ args, options: OPTIONS }).values;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const message = e.message;
    const quoted = (/'([^']+)'/.exec(message)?.[1] ?? '').replace(/ <value>$/, '');
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') fail(unknownOption(quoted));
    if (e.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') fail(`unexpected argument ${JSON.stringify(quoted)} (a topic goes after -t: -t ${quoted})`);
    if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const option = quoted.split(', ').pop()!;
      if (/argument missing/.test(message)) fail(`${option} needs a value`);
      if (/ambiguous/.test(message)) fail(`${option} takes a value; one starting with '-' goes attached: ${option.startsWith('--') ? `${option}=-VALUE` : `${option}-VALUE`}`);
      if (/does not take an argument/.test(message)) fail(`${option} takes no value`);
    }
    fail(message.split('\n')[0]!);
  }
}

function positive(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!(n > 0) || !Number.isFinite(n)) fail(`${name} must be a positive number, not ${JSON.stringify(v)}`);
  return n;
}

/** The settings of a run, checked: every bad argument is found before anything connects. */
interface Settings {
  values: Values;
  props: Record<string, string>;
  bootstrap: string;
  from: From;
  max: number;
  idle: number;
  connectTimeout: number;
  format: 'json' | 'value' | 'none';
}

function settings(values: Values): Settings {
  const props = cliSettings(values.config, values.set ?? [], fail);
  const bootstrap = values.bootstrap ?? props['bootstrap.servers'];
  if (!bootstrap) fail('--bootstrap (-b) is required (or bootstrap.servers in --config / -X)');
  const format = values.format ?? 'json';
  if (format !== 'json' && format !== 'value' && format !== 'none') fail(`--format must be json, value or none, not ${JSON.stringify(values.format)}`);
  const max = positive('--max-records (-c)', values['max-records'], Infinity);
  const idle = positive('--idle-exit-ms', values['idle-exit-ms'], Infinity);
  const connectTimeout = positive('--connect-timeout', values['connect-timeout'], 5_000);
  // Without --from: where auto.offset.reset from --config or -X says, else the end.
  let from: From = { kind: props['auto.offset.reset'] === 'earliest' ? 'earliest' : 'latest' };
  if (values.from !== undefined) {
    const parsed = parseFrom(values.from);
    if (typeof parsed === 'string') fail(parsed);
    from = parsed;
  }
  if (values['share-group'] === undefined) {
    if (values.ack !== undefined) fail('--ack is for share groups (--share-group)');
    if (!values.topic?.length && !values.pattern) fail('give --topic (-t), or --pattern with --group');
    if (values.pattern && !values.group) fail('--pattern needs --group (-G)');
    if (values.partition && values.group) fail('--partition (-p) reads without a group; drop --group or --partition');
    if (values.group && from.kind !== 'earliest' && from.kind !== 'latest') {
      fail(`with --group, --from is where a partition without a committed offset starts: beginning or end, not ${values.from} (offsets, -N and times read without a group)`);
    }
    if (values.group && values['exit-at-end']) fail('--exit-at-end (-e) reads without a group: drop --group, or use --idle-exit-ms');
    if (values.commit !== undefined && values.commit !== 'auto' && values.commit !== 'none') fail(`--commit must be auto or none, not ${JSON.stringify(values.commit)}`);
    if (values.partition?.some((p) => !/^\d+$/.test(p))) fail(`--partition (-p) must be a partition number, not ${JSON.stringify(values.partition.find((p) => !/^\d+$/.test(p)))}`);
  }
  return { values, props, bootstrap, from, max, idle, connectTimeout, format };
}

export async function run(argv: string[]): Promise<number> {
  quietStderr();
  let s: Settings;
  try {
    const values = parse(argv);
    if (values.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    s = settings(values);
  } catch (err) {
    if (!(err instanceof UsageFailure)) throw err;
    process.stderr.write(`kwire consume: ${err.message}; ${HELP_HINT}\n`);
    return 2;
  }
  try {
    return await (s.values['share-group'] !== undefined ? consumeShare(s) : consume(s));
  } catch (err) {
    if (err instanceof UsageFailure) {
      process.stderr.write(`kwire consume: ${err.message}; ${HELP_HINT}\n`);
      return 2;
    }
    process.stderr.write(`kwire consume: ${(err as Error).message}\n`);
    return err instanceof UnreachableError ? err.exitCode : 1;
  } finally {
    // A connection attempt the consumer's close() gave up on (a silent address) must not hold the
    // process past the end of the run.
    setTimeout(() => process.exit(), 1_000).unref();
  }
}

/**
 * Ctrl-C and SIGTERM: the consumer closes (bounded), the summary is printed, and the exit code is
 * 128 + the signal's number, as a shell reports a process the signal ended. A second signal exits
 * at once.
 */
class Signals {
  signal: NodeJS.Signals | undefined;
  /** Rejects at the first signal: what waits on the cluster at the start stops waiting. */
  readonly stopped: Promise<never>;
  private stop: (err: Error) => void = () => {};
  private readonly handler = (signal: NodeJS.Signals) => {
    if (this.signal !== undefined) process.exit(128 + constants.signals[signal]);
    this.signal = signal;
    this.onSignal();
    this.stop(new Error(`interrupted by ${signal}`));
  };

  constructor(private readonly onSignal: () => void) {
    this.stopped = new Promise<never>((_, reject) => {
      this.stop = reject;
    });
    this.stopped.catch(() => {});
    process.on('SIGINT', this.handler);
    process.on('SIGTERM', this.handler);
  }

  get exitCode(): number | undefined {
    return this.signal === undefined ? undefined : 128 + constants.signals[this.signal];
  }

  dispose(): void {
    process.removeListener('SIGINT', this.handler);
    process.removeListener('SIGTERM', this.handler);
  }
}

/** A logger whose warnings wait until the cluster was reached, or not (see heldLogger()). */
interface HeldLogger {
  logger: Logger;
  /** The cluster answered (print what was held) or cannot be reached (drop it, and what follows). */
  release(print: boolean): void;
}

/**
 * Warnings while the cluster is first reached are held: when it cannot be, the one line that says
 * so replaces them (a pool's "connection failed" with its backoff would announce a retry that the
 * CLI does not make); when it can, they are printed then (one bootstrap server of two down).
 */
function heldLogger(base: Logger): HeldLogger {
  let held: (() => void)[] | undefined = [];
  let muted = false;
  const hold =
    (level: 'warn' | 'error') =>
    (message: string, fields?: Record<string, unknown>): void => {
      if (held) held.push(() => base[level](message, fields));
      else if (!muted) base[level](message, fields);
    };
  return {
    logger: { debug: (m, f) => base.debug(m, f), info: (m, f) => base.info(m, f), warn: hold('warn'), error: hold('error') },
    // Not printed: the run ends with its one line, and the bounded close after it says nothing either.
    release(print) {
      const h = held;
      held = undefined;
      muted = !print;
      if (print) for (const line of h ?? []) line();
    },
  };
}

/**
 * A cluster that was never reached has nothing to commit or leave: close() need not wait for a
 * connection attempt that may hang for request.timeout.ms (the exit does not wait for it either).
 */
function closeOptions(failed: unknown): { timeoutMs?: number } {
  return failed instanceof UnreachableError ? { timeoutMs: 500 } : {};
}

/**
 * What both paths (partitions or a group, and a share group) do around their loop: stdout, Ctrl-C,
 * the counts, --idle-exit-ms, and guard(), which reaches the cluster, runs the loop and closes the
 * consumer once whatever happened.
 */
class Run {
  readonly output: Output;
  readonly signals: Signals;
  readonly started = performance.now();
  records = 0;
  valueBytes = 0;
  /** The cluster answered: from then on a close commits and leaves (see guard()). */
  reached = false;
  private lastRecord = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly s: Settings,
    /** Ends the run: closes the consumer, which ends its iterator. */
    private readonly end: () => void,
    onSignal: () => void,
  ) {
    this.output = new Output(process.stdout, end);
    this.signals = new Signals(onSignal);
  }

  /**
   * Reaches the cluster with `start` (the first call that needs it), runs `loop`, and closes the
   * consumer once (`close`, given the error that ended the run) whatever happened. Warnings held
   * while the cluster is first reached are printed when it answers and dropped when it cannot be
   * reached; Ctrl-C during the start (connecting, joining) is not a failure.
   */
  async guard(held: HeldLogger | undefined, start: () => Promise<unknown>, loop: () => Promise<void>, close: (failed: unknown) => Promise<void>): Promise<void> {
    let failed: unknown;
    try {
      try {
        await reach(start(), this.s.bootstrap, this.s.connectTimeout, this.signals.stopped);
      } catch (err) {
        held?.release(false);
        throw err;
      }
      this.reached = true;
      held?.release(true);
      await loop();
    } catch (err) {
      if (this.signals.exitCode === undefined) {
        failed = err;
        throw err;
      }
    } finally {
      clearInterval(this.idleTimer);
      await close(failed);
      this.signals.dispose();
    }
    if (this.output.error) throw new Error(`cannot write to stdout: ${this.output.error.message}`);
  }

  /** --idle-exit-ms: from now, the run ends when no batch came for that long. */
  watchIdle(): void {
    const idle = this.s.idle;
    this.lastRecord = Date.now();
    this.idleTimer = Number.isFinite(idle)
      ? setInterval(
          () => {
            if (Date.now() - this.lastRecord > idle) this.end();
          },
          Math.min(idle, 200),
        )
      : undefined;
  }

  /** A batch was printed: the idle time starts again. */
  batchDone(): void {
    this.lastRecord = Date.now();
  }

  /** Counts one record and returns its line as --format says ('' for none); `json`: its JSON shape. */
  line<R extends ConsumerRecord>(r: R, json: (r: R) => unknown = formatRecord): string {
    const value = r.value as Buffer | null;
    this.valueBytes += value?.length ?? 0;
    if (this.s.format === 'json') return `${JSON.stringify(json(r))}\n`;
    return this.s.format === 'value' ? `${value?.toString('utf8') ?? ''}\n` : '';
  }

  /** Seconds since the run started. */
  get seconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  /** The summary line, and the exit code: a signal's, else 0. */
  finish(summary: string, progress: boolean): number {
    const code = this.signals.exitCode;
    process.stderr.write(`${progress ? '\n' : ''}kwire consume: ${summary}${code !== undefined ? ` (interrupted by ${this.signals.signal})` : ''}\n`);
    return code ?? 0;
  }
}

/**
 * -e: every partition read up to its end as of the start. A partition is done when a record
 * printed reaches its end, or when its position did with nothing printed there (the range holds
 * only transaction markers, or nothing): that is checked on a timer, and believed only when two
 * checks in a row agree with no batch received between them (the stream moves the position just
 * before it hands a batch over).
 */
class EndWatch {
  /** Partitions not done yet, by topic and partition: their end. */
  private readonly remaining = new Map<string, { tp: TopicPartition; end: bigint }>();
  private batches = 0;
  private seen = -1;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly consumer: Consumer,
    ends: Map<TopicPartition, bigint>,
    starts: Map<TopicPartition, StartOffset>,
    private readonly onDone: () => void,
  ) {
    for (const [tp, end] of ends) {
      const start = starts.get(tp);
      if (!(typeof start === 'bigint' && start >= end)) this.remaining.set(tpKey(tp.topic, tp.partition), { tp, end });
    }
    this.timer = setInterval(() => this.check(), 100);
  }

  get done(): boolean {
    return this.remaining.size === 0;
  }

  /** A batch came; what was printed of it ends before `next`. */
  printed(topic: string, partition: number, next: bigint): void {
    this.batches++;
    const key = tpKey(topic, partition);
    const p = this.remaining.get(key);
    if (p !== undefined && next >= p.end) this.remaining.delete(key);
  }

  private check(): void {
    if (this.remaining.size > 0) {
      const all = [...this.remaining.values()].every(({ tp, end }) => {
        const position = this.consumer.position(tp);
        return position !== null && position >= end;
      });
      if (!all || this.seen !== this.batches) {
        this.seen = all ? this.batches : -1;
        return;
      }
      this.remaining.clear();
    }
    this.stop();
    this.onDone();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

async function consume(s: Settings): Promise<number> {
  const { values, props, from, max } = s;
  const base: Logger = values.debug ? consoleLogger('debug') : consoleLogger('warn');
  const held = values.debug ? undefined : heldLogger(base);
  const topics = values.topic ?? [];
  // auto.offset.reset: where --from says when it names an end; else what --config / -X say (it is
  // also where an offset outside the log goes), else latest.
  const fromEnd = from.kind === 'earliest' || from.kind === 'latest' ? from.kind : undefined;
  const reset = (values.from !== undefined ? fromEnd : undefined) ?? props['auto.offset.reset'] ?? fromEnd ?? 'latest';
  if (reset !== 'earliest' && reset !== 'latest' && reset !== 'none') fail(`auto.offset.reset must be earliest, latest or none, not ${JSON.stringify(reset)}`);
  const consumer = createConsumer({
    // The file and -X first: the command's own flags, given explicitly, win.
    ...props,
    ...(values.bootstrap ? { 'bootstrap.servers': values.bootstrap } : {}),
    ...(props['client.id'] ? {} : { 'client.id': 'kwire-consume' }),
    'auto.offset.reset': reset,
    // Dotted names, as in the file: a flag replaces the file's value instead of doubling it.
    ...(values.isolation ? { 'isolation.level': values.isolation } : {}),
    ...(values.group ? { 'group.id': values.group } : {}),
    ...(values.assignor ? { 'partition.assignment.strategy': values.assignor } : {}),
    ...(values.protocol ? { 'group.protocol': values.protocol } : {}),
    ...(values['instance-id'] ? { 'group.instance.id': values['instance-id'] } : {}),
    ...(values.commit !== undefined || props['enable.auto.commit'] === undefined ? { 'enable.auto.commit': values.commit !== 'none' } : {}),
    logger: held?.logger ?? base,
  });
  const c = consumer;
  // Before the cluster answered there is nothing to commit or leave: a short close.
  const run: Run = new Run(
    s,
    () => void c.close(),
    () => void c.close({ timeoutMs: run.reached ? CLOSE_ON_SIGNAL_MS : 500 }),
  );
  let progress: NodeJS.Timeout | undefined;
  let watch: EndWatch | undefined;
  await run.guard(
    held,
    () => consumer.connect(),
    async () => {
      if (values.group) {
        await consumer.subscribe(values.pattern ? { pattern: new RegExp(values.pattern) } : { topics });
      } else {
        const partitions = values.partition?.map(Number);
        const tps: TopicPartition[] = [];
        for (const topic of topics) {
          const existing = await consumer.partitionsFor(topic).catch((err: Error) => {
            throw new Error(`topic ${topic} does not exist or is not visible to this client (${err.message})`);
          });
          for (const p of partitions ?? existing) {
            if (!existing.includes(p)) throw new Error(`topic ${topic} has no partition ${p} (it has ${existing.length}: 0-${existing.length - 1})`);
            tps.push({ topic, partition: p });
          }
        }
        const plan = await planStart(consumer, tps, from, reset, values['exit-at-end'] === true);
        for (const line of plan.notices) process.stderr.write(`kwire consume: ${line}\n`);
        await consumer.assign(tps.map((tp) => ({ ...tp, offset: plan.offsets.get(tp)! })));
        if (values['exit-at-end']) watch = new EndWatch(consumer, plan.ends!, plan.offsets, () => void c.close());
      }
      progress = process.stderr.isTTY
        ? setInterval(() => {
            const t = run.seconds;
            process.stderr.write(`\r${run.records} records, ${(run.valueBytes / 1048576).toFixed(1)} MiB, ${Math.round(run.records / Math.max(t, 0.001))} records/s   `);
          }, 500)
        : undefined;
      run.watchIdle();
      const { output } = run;
      let out = '';
      outer: for await (const batch of consumer) {
        let last: ConsumerRecord | undefined;
        for (const r of batch) {
          out += run.line(r);
          last = r;
          if (++run.records >= max) {
            // Leaving the loop gives the batch back; what was printed is finished (committed on close).
            batch.markProcessed(r);
            break outer;
          }
          if (out.length > 1 << 16) {
            await output.write(out);
            out = '';
          }
        }
        run.batchDone();
        await output.write(out);
        out = '';
        if (watch && last) {
          watch.printed(batch.topic, batch.partition, last.offset + 1n);
          if (watch.done) {
            batch.markProcessed(last);
            break;
          }
        }
        // The reader went away (| head): stop now, without waiting for close() to end the stream.
        if (output.gone) break;
      }
      await output.write(out);
    },
    async (failed) => {
      clearInterval(progress);
      watch?.stop();
      await consumer.close(closeOptions(failed));
    },
  );
  const t = run.seconds;
  return run.finish(`${run.records} records, ${run.valueBytes} value bytes, ${t.toFixed(2)} s, ${Math.round(run.records / Math.max(t, 0.001))} records/s`, progress !== undefined);
}

/** A share record's --format json shape: a record's, with its delivery count. */
function formatShareRecord(r: ShareRecord): FormattedRecord & { deliveryCount: number } {
  return { ...formatRecord(r), deliveryCount: r.deliveryCount };
}

/**
 * --share-group: a share consumer in explicit mode, acknowledging each record it printed with the
 * --ack type, so that stopping early (--max-records, Ctrl-C) releases exactly what was not printed.
 * Settings from --config and -X apply as in the normal path (the security ones above all); the
 * command's flags win, and the acknowledgement mode is explicit whatever they say, since --ack
 * acknowledges each printed record.
 */
async function consumeShare(s: Settings): Promise<number> {
  const { values, props, max } = s;
  const group = values['share-group']!;
  if (!group) fail('--share-group needs a group id');
  for (const option of ['group', 'partition', 'pattern', 'from', 'isolation', 'assignor', 'protocol', 'instance-id', 'commit', 'exit-at-end'] as const) {
    if (values[option] !== undefined) fail(`--${option} does not apply to a share group (--share-group)`);
  }
  const topics = values.topic ?? [];
  if (!topics.length) fail('give --topic (-t)');
  const ack = values.ack ?? 'accept';
  if (ack !== 'accept' && ack !== 'release' && ack !== 'reject') fail(`--ack must be accept, release or reject, not ${JSON.stringify(ack)}`);
  const base: Logger = values.debug ? consoleLogger('debug') : consoleLogger('warn');
  const held = values.debug ? undefined : heldLogger(base);
  const consumer: ShareConsumer = createShareConsumer({
    ...props,
    ...(values.bootstrap ? { 'bootstrap.servers': values.bootstrap } : {}),
    ...(props['client.id'] ? {} : { 'client.id': 'kwire-consume' }),
    // Dotted names, as in the file: the flag replaces a group.id there instead of doubling it.
    'group.id': group,
    'share.acknowledgement.mode': 'explicit',
    logger: held?.logger ?? base,
  });
  const c = consumer;
  const run = new Run(
    s,
    () => void c.close(),
    () => void c.close(),
  );
  await run.guard(
    held,
    () => consumer.subscribe(topics),
    async () => {
      run.watchIdle();
      const { output } = run;
      let out = '';
      outer: for await (const batch of consumer) {
        for (const r of batch as Iterable<ShareRecord>) {
          out += run.line(r, formatShareRecord);
          c.acknowledge(r, ack);
          if (++run.records >= max) break outer;
        }
        run.batchDone();
        await output.write(out);
        out = '';
        if (output.gone) break;
      }
      await output.write(out);
    },
    async (failed) => {
      // The share consumer's close() takes no timeout: the same bound as closeOptions(), by a race.
      const closing = consumer.close();
      await (failed instanceof UnreachableError ? Promise.race([closing, new Promise((r) => setTimeout(r, 500).unref())]) : closing);
    },
  );
  const m = consumer.metrics();
  const t = run.seconds;
  const code = run.finish(
    `share group ${group}: ${run.records} records, ${run.valueBytes} value bytes, ${t.toFixed(2)} s; acknowledged ${m.acknowledged.accept} accept, ${m.acknowledged.release} release, ${m.acknowledged.reject} reject${m.lockExpired ? `, ${m.lockExpired} lock expired` : ''}${m.acknowledgementErrors ? `, ${m.acknowledgementErrors} refused` : ''}`,
    false,
  );
  return m.acknowledgementErrors && code === 0 ? 1 : code;
}
