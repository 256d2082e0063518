import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileJava } from './distribution.js';
import { BrokerError } from './errors.js';
import { cacheDir, packageDir } from './paths.js';
import { runTool, type CompressionType, type KafkaTarget } from './tools.js';

/**
 * Transactions written by the real Java KafkaProducer (java/KwireTransactions.java, compiled once
 * per Kafka release against its jars): committed and aborted ones in the order asked, with keys,
 * headers and optionally a tombstone, for read_committed tests and protocol fixtures.
 *
 * ```ts
 * const { committed, aborted } = await writeTransactions(kafka, { topic: 'tx', transactions: ['commit', 'abort', 'commit'], partition: 0 });
 * // aborted[i].offset: where the aborted records sit in the log; a read_committed consumer must skip them.
 * ```
 *
 * The partition then holds, per transaction, its records followed by one control batch (a COMMIT or
 * ABORT marker, one offset): a transaction of N records to one partition takes N + 1 offsets.
 */

export type TransactionOutcome = 'commit' | 'abort';

export interface TransactionsOptions {
  topic: string;
  /** One entry per transaction, in order. */
  transactions: readonly TransactionOutcome[];
  /** Records per transaction (default 3). */
  recordsPerTransaction?: number;
  /** Write every record to this partition (default: the producer's partitioner, by key). */
  partition?: number;
  compression?: CompressionType;
  /** Default: a fresh id per call. */
  transactionalId?: string;
  /** Record j of transaction i has key `${keyPrefix}${i}-${j}` (default "k") ... */
  keyPrefix?: string;
  /** ... and value `${valuePrefix}${i}-${j}` (default "v"). */
  valuePrefix?: string;
  /** Headers tx, outcome and index on every record (default true). */
  headers?: boolean;
  /** The last record of each transaction is a tombstone (null value). */
  tombstone?: boolean;
  /** Extra producer properties (linger.ms, batch.size, ...); SASL/TLS settings too. */
  props?: Readonly<Record<string, string | number>>;
  timeoutMs?: number;
}

export interface TransactionalRecord {
  /** Index of its transaction in `transactions`. */
  transaction: number;
  outcome: TransactionOutcome;
  /** Index within the transaction. */
  index: number;
  partition: number;
  offset: number;
  key: string;
  /** null for a tombstone. */
  value: string | null;
  headers: [string, string][];
}

export interface TransactionsResult {
  transactionalId: string;
  /** Every record, in the order written. */
  records: TransactionalRecord[];
  committed: TransactionalRecord[];
  aborted: TransactionalRecord[];
}

export const transactionsSource = join(packageDir, 'java', 'KwireTransactions.java');

/** Runs KwireTransactions against `target`; resolves once every transaction has ended. */
export async function writeTransactions(target: KafkaTarget, options: TransactionsOptions): Promise<TransactionsResult> {
  if (options.transactions.length === 0) throw new BrokerError('writeTransactions: no transactions asked for');
  const classes = await compileJava(transactionsSource, { classpath: join(target.dist.libDir, '*') });
  const transactionalId = options.transactionalId ?? `kwire-tx-${randomBytes(4).toString('hex')}`;
  const args = [
    '--bootstrap',
    target.bootstrap,
    '--topic',
    options.topic,
    '--transactional-id',
    transactionalId,
    '--sequence',
    options.transactions.join(','),
    '--records',
    String(options.recordsPerTransaction ?? 3),
    '--compression',
    options.compression ?? 'none',
    '--key-prefix',
    options.keyPrefix ?? 'k',
    '--value-prefix',
    options.valuePrefix ?? 'v',
  ];
  if (options.partition !== undefined) args.push('--partition', String(options.partition));
  if (options.headers === false) args.push('--no-headers');
  if (options.tombstone) args.push('--tombstone');
  // Producer properties go through a file: values such as JAAS lines hold '=' and spaces. It may
  // hold passwords: readable by us only, removed after the run.
  let config: string | undefined;
  if (options.props && Object.keys(options.props).length > 0) {
    const dir = join(cacheDir(), 'tool-config');
    mkdirSync(dir, { recursive: true });
    config = join(dir, `tx-${process.pid}-${randomBytes(4).toString('hex')}.properties`);
    writeFileSync(
      config,
      `${Object.entries(options.props)
        .map(([k, v]) => `${k}=${String(v).replace(/\\/g, '\\\\')}`)
        .join('\n')}\n`,
      { mode: 0o600 },
    );
    args.push('--config', config);
  }
  let result;
  try {
    result = await runTool(target.dist, 'KwireTransactions', args, {
      extraClasspath: [classes],
      timeoutMs: options.timeoutMs ?? 120_000,
      label: `transactions on ${options.topic}`,
      heapMb: 256,
    });
  } finally {
    if (config) rmSync(config, { force: true });
  }
  const lines = result.stdout.split('\n').filter((l) => l.startsWith('{'));
  const done = lines.length ? (JSON.parse(lines.at(-1)!) as { done?: boolean }) : undefined;
  if (result.code !== 0 || !done?.done) {
    throw new BrokerError(`KwireTransactions on ${options.topic} failed (exit code ${String(result.code)})`, {
      logTail: `${result.stdout}${result.stderr}`.trimEnd().split('\n').slice(-30).join('\n'),
    });
  }
  const records = lines.slice(0, -1).map((l) => JSON.parse(l) as TransactionalRecord);
  return {
    transactionalId,
    records,
    committed: records.filter((r) => r.outcome === 'commit'),
    aborted: records.filter((r) => r.outcome === 'abort'),
  };
}
