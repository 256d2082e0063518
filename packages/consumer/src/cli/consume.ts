// kwire consume: read records and print them, from partitions or as a group member.
import { isUtf8 } from 'node:buffer';
import { parseArgs } from 'node:util';
import { cliSettings } from '../security-properties.js';
import { createConsumer, createShareConsumer, type Consumer, type ConsumedRecord, type Logger, type ShareConsumer, type ShareRecord, type StartOffset } from '../index.js';
import { consoleLogger } from '../logger.js';

const USAGE = `usage: kwire consume --bootstrap HOST:PORT (--topic T [--topic T2 ...] | --pattern REGEX) [options]

  --bootstrap HOST:PORT[,...]   brokers to start from (bootstrap.servers)
  --config FILE                 consumer settings from a Java properties file: any consumer option
                                by its Java name, and security.protocol, sasl.mechanism,
                                sasl.jaas.config (PLAIN, SCRAM), ssl.ca.location,
                                ssl.certificate.location, ssl.key.location (PEM), ssl.key.password
  -X, --set KEY=VALUE           one such setting (repeatable; after --config, so it wins)
  --topic T                     a topic to read (repeatable)
  --partition N                 only this partition of each topic (repeatable; not with --group)
  --from earliest|latest|OFFSET|@TIMESTAMP_MS
                                where to start: the start or end of each partition (with --group:
                                where a partition without a committed offset starts; default
                                latest), an offset, or the first record at or after a time in ms
                                since the epoch (OFFSET and @TIMESTAMP_MS read without a group)
  --max-records N               stop after N records
  --idle-exit-ms MS             stop after MS without a record
  --format json|value|none      json: one object per line {topic, partition, offset, timestamp,
                                key, value, headers}, key and value as UTF-8 strings where valid,
                                else {"base64": "..."}, offsets as decimal strings; value: the
                                value bytes and a newline; none: nothing (count only). Default json
  --isolation read_committed|read_uncommitted   (default read_uncommitted)
  --group G                     consume as a member of group G (subscribe)
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

A summary goes to stderr at the end; a progress line too when stderr is a terminal.
`;

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
export function formatRecord(r: ConsumedRecord): FormattedRecord {
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

function fail(message: string): never {
  throw Object.assign(new Error(message), { usage: true });
}

export async function run(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        bootstrap: { type: 'string' },
        topic: { type: 'string', multiple: true },
        partition: { type: 'string', multiple: true },
        from: { type: 'string' },
        'max-records': { type: 'string' },
        'idle-exit-ms': { type: 'string' },
        format: { type: 'string' },
        isolation: { type: 'string' },
        group: { type: 'string' },
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
      },
    }));
  } catch (err) {
    process.stderr.write(`kwire consume: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  let consumer: Consumer | undefined;
  try {
    const props = cliSettings(values.config, values.set ?? [], fail);
    if (!values.bootstrap && !props['bootstrap.servers']) fail('--bootstrap is required (or bootstrap.servers in --config / -X)');
    if (values['share-group'] !== undefined) return await consumeShare(values as ShareArgs, props);
    if (values.ack !== undefined) fail('--ack is for share groups (--share-group)');
    const topics = values.topic ?? [];
    if (!topics.length && !values.pattern) fail('give --topic (or --pattern with --group)');
    if (values.pattern && !values.group) fail('--pattern needs --group');
    if (values.partition && values.group) fail('--partition reads without a group; drop --group or --partition');
    const format = values.format ?? 'json';
    if (!['json', 'value', 'none'].includes(format)) fail(`--format must be json, value or none, not ${values.format}`);
    const from = values.from ?? 'latest';
    let start: StartOffset;
    if (from === 'earliest' || from === 'latest') start = from;
    else if (/^\d+$/.test(from)) start = BigInt(from);
    else if (/^@\d+$/.test(from)) start = { timestamp: BigInt(from.slice(1)) };
    else fail(`--from must be earliest, latest, an offset or @TIMESTAMP_MS, not ${values.from}`);
    if (typeof start !== 'string' && values.group) fail('--from OFFSET and --from @TIMESTAMP_MS read without a group: the group starts from its committed offsets');
    const max = values['max-records'] === undefined ? Infinity : Number(values['max-records']);
    if (!(max > 0)) fail('--max-records must be a positive number');
    const idle = values['idle-exit-ms'] === undefined ? Infinity : Number(values['idle-exit-ms']);
    if (!(idle > 0)) fail('--idle-exit-ms must be a positive number');
    if (values.commit && values.commit !== 'auto' && values.commit !== 'none') fail('--commit must be auto or none');
    const logger: Logger | undefined = values.debug ? consoleLogger('debug') : consoleLogger('warn');

    consumer = createConsumer({
      // The file and -X first: the command's own flags, given explicitly, win.
      ...props,
      ...(values.bootstrap ? { 'bootstrap.servers': values.bootstrap } : {}),
      ...(props['client.id'] ? {} : { 'client.id': 'kwire-consume' }),
      ...(values.from !== undefined || props['auto.offset.reset'] === undefined ? { 'auto.offset.reset': typeof start === 'string' ? start : 'latest' } : {}),
      // Dotted names, as in the file: a flag replaces the file's value instead of doubling it.
      ...(values.isolation ? { 'isolation.level': values.isolation } : {}),
      ...(values.group ? { 'group.id': values.group } : {}),
      ...(values.assignor ? { 'partition.assignment.strategy': values.assignor } : {}),
      ...(values.protocol ? { 'group.protocol': values.protocol } : {}),
      ...(values['instance-id'] ? { 'group.instance.id': values['instance-id'] } : {}),
      ...(values.commit !== undefined || props['enable.auto.commit'] === undefined ? { 'enable.auto.commit': values.commit !== 'none' } : {}),
      logger,
    });
    if (values.group) {
      await consumer.subscribe(values.pattern ? { pattern: new RegExp(values.pattern) } : { topics });
    } else {
      const partitions = values.partition?.map(Number);
      if (partitions?.some((p) => !Number.isInteger(p) || p < 0)) fail('--partition must be a partition number');
      const assignment: { topic: string; partition: number; offset: StartOffset }[] = [];
      for (const topic of topics) {
        const existing = await consumer.partitionsFor(topic).catch((err: Error) => {
          throw new Error(`topic ${topic} does not exist or is not visible to this client (${err.message})`);
        });
        for (const p of partitions ?? existing) {
          if (!existing.includes(p)) throw new Error(`topic ${topic} has no partition ${p}`);
          assignment.push({ topic, partition: p, offset: start });
        }
      }
      await consumer.assign(assignment);
    }

    const started = performance.now();
    let records = 0;
    let valueBytes = 0;
    let lastRecord = Date.now();
    const c = consumer;
    const progress = process.stderr.isTTY
      ? setInterval(() => {
          const s = (performance.now() - started) / 1000;
          process.stderr.write(`\r${records} records, ${(valueBytes / 1048576).toFixed(1)} MiB, ${Math.round(records / Math.max(s, 0.001))} records/s   `);
        }, 500)
      : undefined;
    const idleTimer = Number.isFinite(idle)
      ? setInterval(
          () => {
            if (Date.now() - lastRecord > idle) void c.close();
          },
          Math.min(idle, 200),
        )
      : undefined;
    let interrupted = false;
    const stop = () => {
      interrupted = true;
      void c.close();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    let out = '';
    const flush = async () => {
      if (!out) return;
      const chunk = out;
      out = '';
      if (!process.stdout.write(chunk)) await new Promise((r) => process.stdout.once('drain', r));
    };
    outer: for await (const batch of consumer) {
      for (const r of batch) {
        const value = r.value as Buffer | null;
        valueBytes += value?.length ?? 0;
        if (format === 'json') out += `${JSON.stringify(formatRecord(r))}\n`;
        else if (format === 'value') out += `${value?.toString('utf8') ?? ''}\n`;
        if (++records >= max) {
          // Leaving the loop gives the batch back; what was printed is finished (committed on close).
          batch.markProcessed(r);
          break outer;
        }
      }
      lastRecord = Date.now();
      if (out.length > 1 << 16) await flush();
    }
    await flush();
    clearInterval(progress);
    clearInterval(idleTimer);
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    await consumer.close();
    const s = (performance.now() - started) / 1000;
    process.stderr.write(
      `${progress ? '\n' : ''}kwire consume: ${records} records, ${valueBytes} value bytes, ${s.toFixed(2)} s, ${Math.round(records / Math.max(s, 0.001))} records/s${interrupted ? ' (interrupted)' : ''}\n`,
    );
    return 0;
  } catch (err) {
    await consumer?.close().catch(() => {});
    process.stderr.write(`kwire consume: ${(err as Error).message}\n${(err as { usage?: boolean }).usage ? `\n${USAGE}` : ''}`);
    return (err as { usage?: boolean }).usage ? 2 : 1;
  }
}

interface ShareArgs {
  bootstrap?: string;
  topic?: string[];
  'share-group': string;
  ack?: string;
  format?: string;
  'max-records'?: string;
  'idle-exit-ms'?: string;
  debug?: boolean;
  [other: string]: unknown;
}

/**
 * --share-group: a share consumer in explicit mode, acknowledging each record it printed with the
 * --ack type, so that stopping early (--max-records, Ctrl-C) releases exactly what was not printed.
 * Settings from --config and -X apply as in the normal path (the security ones above all); the
 * command's flags win, and the acknowledgement mode is explicit whatever they say, since --ack
 * acknowledges each printed record.
 */
async function consumeShare(values: ShareArgs, props: Record<string, string>): Promise<number> {
  const group = values['share-group'];
  if (!group) fail('--share-group needs a group id');
  for (const option of ['group', 'partition', 'pattern', 'from', 'isolation', 'assignor', 'protocol', 'instance-id', 'commit']) {
    if (values[option] !== undefined) fail(`--${option} does not apply to a share group (--share-group)`);
  }
  const topics = values.topic ?? [];
  if (!topics.length) fail('give --topic');
  const ack = values.ack ?? 'accept';
  if (ack !== 'accept' && ack !== 'release' && ack !== 'reject') fail(`--ack must be accept, release or reject, not ${ack}`);
  const format = values.format ?? 'json';
  if (!['json', 'value', 'none'].includes(format)) fail(`--format must be json, value or none, not ${values.format}`);
  const max = values['max-records'] === undefined ? Infinity : Number(values['max-records']);
  if (!(max > 0)) fail('--max-records must be a positive number');
  const idle = values['idle-exit-ms'] === undefined ? Infinity : Number(values['idle-exit-ms']);
  if (!(idle > 0)) fail('--idle-exit-ms must be a positive number');
  const logger: Logger = values.debug ? consoleLogger('debug') : consoleLogger('warn');
  let consumer: ShareConsumer | undefined;
  try {
    consumer = createShareConsumer({
      ...props,
      ...(values.bootstrap ? { 'bootstrap.servers': values.bootstrap } : {}),
      ...(props['client.id'] ? {} : { 'client.id': 'kwire-consume' }),
      // Dotted names, as in the file: the flag replaces a group.id there instead of doubling it.
      'group.id': group,
      'share.acknowledgement.mode': 'explicit',
      logger,
    });
    await consumer.subscribe(topics);
    const c = consumer;
    const started = performance.now();
    let records = 0;
    let valueBytes = 0;
    let lastRecord = Date.now();
    const idleTimer = Number.isFinite(idle)
      ? setInterval(
          () => {
            if (Date.now() - lastRecord > idle) void c.close();
          },
          Math.min(idle, 200),
        )
      : undefined;
    let interrupted = false;
    const stop = () => {
      interrupted = true;
      void c.close();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    let out = '';
    outer: for await (const batch of consumer) {
      for (const r of batch as Iterable<ShareRecord>) {
        const value = r.value as Buffer | null;
        valueBytes += value?.length ?? 0;
        if (format === 'json') out += `${JSON.stringify({ ...formatRecord(r), deliveryCount: r.deliveryCount })}\n`;
        else if (format === 'value') out += `${value?.toString('utf8') ?? ''}\n`;
        c.acknowledge(r, ack);
        if (++records >= max) break outer;
      }
      lastRecord = Date.now();
      if (out) {
        const chunk = out;
        out = '';
        if (!process.stdout.write(chunk)) await new Promise((r) => process.stdout.once('drain', r));
      }
    }
    if (out && !process.stdout.write(out)) await new Promise((r) => process.stdout.once('drain', r));
    clearInterval(idleTimer);
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    await consumer.close();
    const m = consumer.metrics();
    const s = (performance.now() - started) / 1000;
    process.stderr.write(
      `kwire consume: share group ${group}: ${records} records, ${valueBytes} value bytes, ${s.toFixed(2)} s; acknowledged ${m.acknowledged.accept} accept, ${m.acknowledged.release} release, ${m.acknowledged.reject} reject${m.lockExpired ? `, ${m.lockExpired} lock expired` : ''}${m.acknowledgementErrors ? `, ${m.acknowledgementErrors} refused` : ''}${interrupted ? ' (interrupted)' : ''}\n`,
    );
    return m.acknowledgementErrors ? 1 : 0;
  } catch (err) {
    await consumer?.close().catch(() => {});
    throw err;
  }
}
