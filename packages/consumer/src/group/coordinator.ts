import { ErrorCode, errorFor, FindCoordinator, Metadata } from '@kwire/protocol';
import type { BrokerPool, Connection } from '../connection/index.js';
import { BrokerResponseError, ClosedError, KafkaError } from '../errors.js';
import type { Logger } from '../logger.js';
import { withDeadline } from '../deadline.js';

/**
 * Java's String.hashCode: h = 31 * h + c over UTF-16 code units, in 32-bit wrap-around arithmetic.
 */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * The __consumer_offsets partition that holds a group, as the broker computes it:
 * Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions, where Kafka's abs gives 0 for
 * Integer.MIN_VALUE (so "polygenelubricants", whose hash is -2^31, lands on partition 0, not 48).
 * "test-group" gives 12 of 50.
 */
export function coordinatorPartition(groupId: string, offsetsTopicPartitions = 50): number {
  const h = javaStringHashCode(groupId);
  const abs = h === -2147483648 ? 0 : Math.abs(h);
  return abs % offsetsTopicPartitions;
}

/** Coordinator errors after which the coordinator must be looked up again. */
export const COORDINATOR_MOVED = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE]);
/** The same coordinator, a little later. */
export const COORDINATOR_LOADING = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;

export interface CoordinatorOptions {
  pool: BrokerPool;
  groupId: string;
  retryBackoffMs: number;
  logger: Logger;
  isClosed: () => boolean;
}

/**
 * Finds and keeps the group coordinator, on a connection of its own (purpose 'coordinator'): a
 * JoinGroup parked for a whole rebalance must not hold back fetches, nor a fetch long poll the
 * heartbeats. FindCoordinator is retried with backoff while the coordinator is not available (the
 * offsets topic being created or loaded, a coordinator moving).
 */
export class GroupCoordinator {
  private node: { nodeId: number; host: string; port: number } | undefined;
  private finding: Promise<Connection> | undefined;

  constructor(private readonly options: CoordinatorOptions) {}

  get nodeId(): number | undefined {
    return this.node?.nodeId;
  }

  /**
   * The coordinator's connection, looking it up first if needed (retried while it is not
   * available). With a `deadline` (Date.now() time), a RequestTimeoutError once it passes: close()
   * and a lost session must not wait for a cluster that is gone.
   */
  connection(deadline = Infinity): Promise<Connection> {
    let conn: Promise<Connection>;
    if (this.node) {
      const node = this.node;
      conn = this.options.pool.get(node, 'coordinator').catch((err: unknown) => {
        this.markDead(`cannot connect: ${(err as Error).message}`);
        throw err;
      });
    } else {
      this.finding ??= this.find().finally(() => (this.finding = undefined));
      conn = this.finding;
    }
    return withDeadline(conn, deadline, `finding the coordinator of group ${this.options.groupId}`);
  }

  /**
   * Whether the coordinator's broker answers now (a Metadata request without topics, on a
   * connection of its own: the coordinator connection may be busy with a JoinGroup parked for the
   * whole rebalance). False when it is not known, unreachable or silent for `timeoutMs`.
   */
  async probe(timeoutMs: number): Promise<boolean> {
    const node = this.node;
    if (!node) return false;
    try {
      const conn = await withDeadline(this.options.pool.get(node, 'data'), Date.now() + timeoutMs, 'probing the coordinator');
      await conn.request(Metadata, { topics: [], allowAutoTopicCreation: false }, { timeoutMs: Math.max(1, timeoutMs) });
      return true;
    } catch {
      return false;
    }
  }

  /** Forget the coordinator (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, a broken connection). */
  markDead(why: string): void {
    if (!this.node) return;
    this.options.logger.info('group coordinator lost', { groupId: this.options.groupId, nodeId: this.node.nodeId, why });
    const node = this.node;
    this.node = undefined;
    void this.options.pool.disconnect(node, 'coordinator').catch(() => {});
  }

  private async find(): Promise<Connection> {
    const { pool, groupId, retryBackoffMs, logger } = this.options;
    let backoff = retryBackoffMs;
    for (let attempt = 0; ; attempt++) {
      if (this.options.isClosed()) throw new ClosedError('the consumer');
      try {
        const conn = await pool.leastLoaded();
        const version = conn.version(FindCoordinator);
        const res = await conn.request(FindCoordinator, { key: groupId, keyType: 0, coordinatorKeys: [groupId] });
        const c = version >= 4 ? res.coordinators[0] : { errorCode: res.errorCode, errorMessage: res.errorMessage, nodeId: res.nodeId, host: res.host, port: res.port };
        if (!c) throw new KafkaError('KWIRE_BROKER', 'FindCoordinator answered without a coordinator', { retriable: true });
        if (c.errorCode === 0) {
          this.node = { nodeId: c.nodeId, host: c.host, port: c.port };
          logger.debug('group coordinator found', { groupId, nodeId: c.nodeId, host: c.host, port: c.port });
          return await pool.get(this.node, 'coordinator');
        }
        const err = new BrokerResponseError(c.errorCode, `FindCoordinator ${groupId}`, c.errorMessage);
        if (!errorFor(c.errorCode).retriable) throw err;
        logger.debug('coordinator not available yet', { groupId, error: err.errorName, attempt });
      } catch (err) {
        if (err instanceof KafkaError && !err.retriable) throw err;
        logger.debug('FindCoordinator failed', { groupId, error: (err as Error).message, attempt });
      }
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 1_000);
    }
  }
}
