/**
 * Connections to the brokers of one cluster, created on first use and kept.
 *
 * - Keyed by node id when the caller knows it (the metadata layer does), else by host:port, and by
 *   purpose: 'data' for ordinary requests, 'coordinator' for the group coordinator, 'live-fetch' for
 *   the fetcher's Fetches of partitions caught up with their log. They never share a connection
 *   even when the coordinator is also a partition leader, because a broker answers one
 *   connection's requests in order: a JoinGroup parked for the whole rebalance, or a Fetch long
 *   poll, would otherwise hold back every request queued behind it (the Java client keeps a
 *   separate coordinator connection for the same reason), and a caught-up partition's few new
 *   records would wait behind a lagging partition's megabytes.
 * - Bootstrap: the configured servers tried in turn (those not backing off first) until one answers.
 * - Reconnects back off exponentially with jitter (reconnectBackoffMs doubling up to
 *   reconnectBackoffMaxMs, as the Java client). A connection attempt that fails waits out its
 *   backoff before the next one; an authentication failure (wrong password, untrusted TLS
 *   certificate) is not retried at all within its backoff (at least reconnectBackoffMaxMs): get()
 *   fails at once with the same AuthenticationError, so a caller retrying in a loop cannot turn a
 *   bad password into a connection storm against the broker.
 * - Idle connections (nothing sent or received for connectionsMaxIdleMs) are closed, as the Java
 *   client's connections.max.idle.ms.
 *
 * The pool knows nothing of metadata: callers pass host, port and node id.
 */
import { AuthenticationError, ClosedError, ConfigError, ConnectionError, isKafkaError } from '../errors.js';
import { Backoff } from './backoff.js';
import { Connection } from './connection.js';
import { parseBootstrapServers, positiveInt, resolveConnectionConfig, validateAddress, type ConnectionConfig, type ConnectionOptions } from './options.js';
import type { Logger } from '../logger.js';

export type ConnectionPurpose = 'data' | 'coordinator' | 'live-fetch';

export interface BrokerAddress {
  host: string;
  port: number;
  /** The broker's node id when known: connections are then keyed by it. */
  nodeId?: number;
}

export interface BrokerPoolOptions extends ConnectionConfig {
  /** bootstrap.servers: "host:port,host:port" or an array of "host:port". */
  bootstrapServers: string | readonly string[];
  /** reconnect.backoff.ms: first delay after a failed attempt. Default 50. */
  reconnectBackoffMs?: number;
  /** reconnect.backoff.max.ms: the ceiling of the doubling. Default 1000. */
  reconnectBackoffMaxMs?: number;
  /** connections.max.idle.ms: close connections idle this long; negative disables. Default 540000. */
  connectionsMaxIdleMs?: number;
  /** How connections are made (tests substitute their own). Default Connection.connect. */
  connectionFactory?: (options: ConnectionOptions) => Promise<Connection>;
}

export interface BrokerPoolStats {
  /** Connection attempts started (each one a TCP connect). */
  connectAttempts: number;
  connectFailures: number;
  authenticationFailures: number;
  /** get() calls answered with a remembered AuthenticationError, without a new attempt. */
  fastFailures: number;
  idleClosed: number;
}

interface Entry {
  readonly key: string;
  readonly purpose: ConnectionPurpose | 'bootstrap';
  host: string;
  port: number;
  nodeId: number | undefined;
  connection: Connection | undefined;
  connecting: Promise<Connection> | undefined;
  readonly backoff: Backoff;
  /** The last attempt's AuthenticationError, answered again until the backoff has passed. */
  authError: Error | undefined;
}

/** What a client's resolved configuration (the consumer's, the share consumer's) says of its connections. */
export type ClientConnectionSettings = Pick<
  BrokerPoolOptions,
  'clientId' | 'requestTimeoutMs' | 'socketConnectionSetupTimeoutMs' | 'reconnectBackoffMs' | 'reconnectBackoffMaxMs' | 'ssl' | 'sasl' | 'logger'
> & { bootstrapServers: readonly { host: string; port: number }[] };

/** The pool options of a client: its connection settings, and the frame pool it shares with its record decoder. */
export function clientPoolOptions(c: ClientConnectionSettings, framePool: NonNullable<BrokerPoolOptions['framePool']>): BrokerPoolOptions {
  return {
    framePool,
    bootstrapServers: c.bootstrapServers.map((b) => `${b.host}:${b.port}`),
    clientId: c.clientId,
    requestTimeoutMs: c.requestTimeoutMs,
    socketConnectionSetupTimeoutMs: c.socketConnectionSetupTimeoutMs,
    reconnectBackoffMs: c.reconnectBackoffMs,
    reconnectBackoffMaxMs: c.reconnectBackoffMaxMs,
    ssl: c.ssl,
    sasl: c.sasl,
    logger: c.logger,
  };
}

export class BrokerPool {
  private readonly options: BrokerPoolOptions;
  private readonly bootstrapServers: { host: string; port: number }[];
  private readonly entries = new Map<string, Entry>();
  private readonly reconnectBackoffMs: number;
  private readonly reconnectBackoffMaxMs: number;
  private readonly connectionsMaxIdleMs: number;
  private readonly connectionFactory: (options: ConnectionOptions) => Promise<Connection>;
  private readonly logger: Logger;
  private bootstrapNext = 0;
  private closed = false;
  private idleTimer: NodeJS.Timeout | undefined;
  /** Backoff waits in progress, cancelled by close(). */
  private readonly sleepers = new Set<{ timer: NodeJS.Timeout; reject(err: Error): void }>();
  readonly stats: BrokerPoolStats = { connectAttempts: 0, connectFailures: 0, authenticationFailures: 0, fastFailures: 0, idleClosed: 0 };

  constructor(options: BrokerPoolOptions) {
    if (typeof options !== 'object' || options === null) throw new ConfigError('BrokerPool options must be an object');
    this.bootstrapServers = parseBootstrapServers(options.bootstrapServers);
    // Validates every connection option now, so that a bad one fails here and not at first use.
    const resolved = resolveConnectionConfig(options);
    this.logger = resolved.logger;
    this.reconnectBackoffMs = positiveInt('reconnectBackoffMs', options.reconnectBackoffMs, 50, { allowZero: true });
    this.reconnectBackoffMaxMs = positiveInt('reconnectBackoffMaxMs', options.reconnectBackoffMaxMs, 1000, { allowZero: true });
    if (this.reconnectBackoffMaxMs < this.reconnectBackoffMs) {
      throw new ConfigError(`reconnectBackoffMaxMs (${this.reconnectBackoffMaxMs}) must not be below reconnectBackoffMs (${this.reconnectBackoffMs})`);
    }
    const idle = options.connectionsMaxIdleMs ?? 540_000;
    if (typeof idle !== 'number' || !Number.isSafeInteger(idle) || idle === 0) {
      throw new ConfigError(`connectionsMaxIdleMs must be a positive integer (or negative to disable), got ${String(idle)}`);
    }
    this.connectionsMaxIdleMs = idle;
    if (options.connectionFactory !== undefined && typeof options.connectionFactory !== 'function') throw new ConfigError('connectionFactory must be a function');
    this.connectionFactory = options.connectionFactory ?? ((o) => Connection.connect(o));
    this.options = options;
  }

  /**
   * The connection for `broker` and `purpose`, opened if needed. Rejects with ConnectionError
   * (retriable: call again, the pool backs off), AuthenticationError (not retriable) or ClosedError.
   */
  get(broker: BrokerAddress, purpose: ConnectionPurpose = 'data'): Promise<Connection> {
    if (this.closed) return Promise.reject(new ClosedError('broker pool'));
    if (purpose !== 'data' && purpose !== 'coordinator' && purpose !== 'live-fetch') {
      return Promise.reject(new ConfigError(`purpose must be 'data', 'coordinator' or 'live-fetch', got ${String(purpose)}`));
    }
    let address: { host: string; port: number };
    try {
      address = validateAddress(broker?.host, broker?.port);
      if (broker.nodeId !== undefined && !Number.isInteger(broker.nodeId)) throw new ConfigError(`nodeId must be an integer, got ${String(broker.nodeId)}`);
    } catch (err) {
      return Promise.reject(err);
    }
    const nodeId = broker.nodeId !== undefined && broker.nodeId >= 0 ? broker.nodeId : undefined;
    const key = nodeId !== undefined ? `${purpose}/node-${nodeId}` : `${purpose}/${address.host}:${address.port}`;
    return this.obtain(this.entry(key, purpose, address, nodeId));
  }

  /**
   * The open, ready connection for a node and purpose, or undefined: get() without the promise.
   * The fetcher sends its next Fetch with it in the same tick as it handles an answer, ahead of the
   * application's code (an await here would let the application run first).
   */
  ready(broker: BrokerAddress & { nodeId: number }, purpose: ConnectionPurpose = 'data'): Connection | undefined {
    if (this.closed) return undefined;
    const e = this.entries.get(`${purpose}/node-${broker.nodeId}`);
    // A node that moved goes through get(), which reconnects.
    if (e === undefined || e.host !== broker.host || e.port !== broker.port) return undefined;
    const c = e.connection;
    return c !== undefined && c.ready ? c : undefined;
  }

  /** A connection to any bootstrap server, trying them in turn. */
  async bootstrap(): Promise<Connection> {
    if (this.closed) throw new ClosedError('broker pool');
    const n = this.bootstrapServers.length;
    const candidates: Entry[] = [];
    for (let i = 0; i < n; i++) {
      const s = this.bootstrapServers[(this.bootstrapNext + i) % n]!;
      const e = this.entry(`bootstrap/${s.host}:${s.port}`, 'bootstrap', s, undefined);
      if (e.connection?.ready) return e.connection;
      candidates.push(e);
    }
    // Servers not backing off first (stable, so the rotation order holds among equals).
    const now = Date.now();
    candidates.sort((a, b) => a.backoff.remaining(now) - b.backoff.remaining(now));
    const failures: string[] = [];
    let last: unknown;
    for (const e of candidates) {
      try {
        const c = await this.obtain(e);
        return c;
      } catch (err) {
        // Credentials and configuration are the same for every server: trying the next one would
        // only fail again (and hammer another broker).
        if (err instanceof AuthenticationError || err instanceof ClosedError || err instanceof ConfigError) throw err;
        failures.push(`${e.host}:${e.port} (${(err as Error).message})`);
        last = err;
      }
    }
    this.bootstrapNext = (this.bootstrapNext + 1) % n;
    throw new ConnectionError(this.bootstrapServers.map((s) => `${s.host}:${s.port}`).join(','), `none of the bootstrap servers could be reached: ${failures.join('; ')}`, { cause: last });
  }

  /** A ready data connection with the fewest requests in flight, else a bootstrap connection. */
  async leastLoaded(): Promise<Connection> {
    let best: Connection | undefined;
    for (const e of this.entries.values()) {
      const c = e.connection;
      if (e.purpose === 'coordinator' || e.purpose === 'live-fetch' || c === undefined || !c.ready) continue;
      if (best === undefined || c.inFlight < best.inFlight) best = c;
    }
    return best ?? this.bootstrap();
  }

  /** The open connections (for stats and tests). */
  connections(): Connection[] {
    const out: Connection[] = [];
    for (const e of this.entries.values()) if (e.connection !== undefined) out.push(e.connection);
    return out;
  }

  /** Closes the connection for `broker`/`purpose` if open (e.g. the broker left the cluster). */
  async disconnect(broker: BrokerAddress, purpose: ConnectionPurpose = 'data'): Promise<void> {
    for (const e of this.entries.values()) {
      if (e.purpose !== purpose) continue;
      const match = broker.nodeId !== undefined && broker.nodeId >= 0 ? e.nodeId === broker.nodeId : e.host === broker.host && e.port === broker.port;
      if (!match) continue;
      const c = e.connection;
      e.connection = undefined;
      this.entries.delete(e.key);
      if (c) await c.close();
    }
  }

  /**
   * Closes every connection (waiting for in-flight requests up to `timeoutMs`, default each
   * connection's closeTimeoutMs; then they fail with ClosedError) and stops.
   */
  /**
   * Closes every connection: each waits for its requests in flight (at most `timeoutMs`), except
   * those of the purposes in `abandon`, cut at once (a consumer's fetch connections: a long poll's
   * answer is of no use after close(), and waiting for it held close() up to fetch.max.wait.ms).
   */
  async close(options: { timeoutMs?: number; abandon?: readonly ConnectionPurpose[] } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.idleTimer);
    this.idleTimer = undefined;
    for (const s of this.sleepers) {
      clearTimeout(s.timer);
      s.reject(new ClosedError('broker pool'));
    }
    this.sleepers.clear();
    const work: Promise<unknown>[] = [];
    for (const e of this.entries.values()) {
      if (e.connection && options.abandon?.includes(e.purpose as ConnectionPurpose)) {
        e.connection.destroy(new ClosedError(`connection to ${e.host}:${e.port} (${e.purpose}: not needed after close())`));
      } else if (e.connection) work.push(e.connection.close({ ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}) }));
      // A connect in progress is destroyed by obtain() as soon as it settles.
      if (e.connecting) work.push(e.connecting.catch(() => {}));
    }
    this.entries.clear();
    await Promise.all(work);
  }

  // ---------------------------------------------------------------------------------------

  private entry(key: string, purpose: Entry['purpose'], address: { host: string; port: number }, nodeId: number | undefined): Entry {
    let e = this.entries.get(key);
    if (e === undefined) {
      e = {
        key,
        purpose,
        host: address.host,
        port: address.port,
        nodeId,
        connection: undefined,
        connecting: undefined,
        backoff: new Backoff({ baseMs: this.reconnectBackoffMs, maxMs: this.reconnectBackoffMaxMs }),
        authError: undefined,
      };
      this.entries.set(key, e);
    } else if (e.host !== address.host || e.port !== address.port) {
      // The node moved (metadata says so): drop the old connection, start afresh.
      this.logger.info('broker address changed', { nodeId, from: `${e.host}:${e.port}`, to: `${address.host}:${address.port}` });
      const old = e.connection;
      e.connection = undefined;
      e.host = address.host;
      e.port = address.port;
      e.authError = undefined;
      e.backoff.succeed();
      if (old) void old.close();
    }
    return e;
  }

  private obtain(e: Entry): Promise<Connection> {
    const c = e.connection;
    if (c !== undefined) {
      if (c.ready) return Promise.resolve(c);
      e.connection = undefined;
    }
    if (e.connecting === undefined) {
      const attempt = this.attempt(e);
      e.connecting = attempt;
      const clear = () => {
        if (e.connecting === attempt) e.connecting = undefined;
      };
      attempt.then(clear, clear);
    }
    return e.connecting;
  }

  private async attempt(e: Entry): Promise<Connection> {
    const wait = e.backoff.remaining();
    if (wait > 0) {
      if (e.authError !== undefined) {
        this.stats.fastFailures++;
        throw e.authError;
      }
      await this.sleep(wait);
    }
    if (this.closed) throw new ClosedError('broker pool');
    this.stats.connectAttempts++;
    const address = `${e.host}:${e.port}`;
    let connection: Connection;
    try {
      connection = await this.connectionFactory({ ...this.options, host: e.host, port: e.port, nodeId: e.nodeId });
    } catch (err) {
      const auth = err instanceof AuthenticationError;
      this.stats.connectFailures++;
      if (auth) this.stats.authenticationFailures++;
      // An authentication failure will fail again: wait at least the longest backoff.
      const delay = e.backoff.fail(Date.now(), auth ? this.reconnectBackoffMaxMs : 0);
      e.authError = auth ? (err as Error) : undefined;
      // backoffMs: how long the next attempt to this server waits, if one is made (it is the
      // caller's to make): not a retry announced.
      const fields = { broker: address, nodeId: e.nodeId, purpose: e.purpose, backoffMs: delay, error: (err as Error)?.message };
      // A connect that fails once the pool is closed failed for no one: close() is on purpose.
      if (this.closed) this.logger.debug('connection failed after close()', fields);
      else if (auth) this.logger.error('authentication failed', fields);
      else this.logger.warn('connection failed', fields);
      throw isKafkaError(err) || err instanceof Error ? err : new ConnectionError(address, String(err));
    }
    if (this.closed) {
      connection.destroy();
      throw new ClosedError('broker pool');
    }
    e.backoff.succeed();
    e.authError = undefined;
    e.connection = connection;
    connection.once('close', (reason) => {
      if (e.connection === connection) e.connection = undefined;
      // A connection that broke (not one we closed) makes the next attempt wait a little, so a
      // broker that accepts and drops connections is not reconnected to in a tight loop.
      if (reason !== undefined && !this.closed) e.backoff.fail();
    });
    this.armIdleTimer();
    return connection;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const s = {
        timer: setTimeout(() => {
          this.sleepers.delete(s);
          resolve();
        }, ms),
        reject,
      };
      this.sleepers.add(s);
    });
  }

  private armIdleTimer(): void {
    if (this.idleTimer !== undefined || this.connectionsMaxIdleMs < 0) return;
    const every = Math.min(30_000, Math.max(25, Math.floor(this.connectionsMaxIdleMs / 2)));
    this.idleTimer = setInterval(() => this.closeIdle(), every);
    // Idle bookkeeping must not keep a process alive.
    this.idleTimer.unref();
  }

  private closeIdle(): void {
    let open = 0;
    for (const e of this.entries.values()) {
      const c = e.connection;
      if (c === undefined) continue;
      if (c.ready && c.idleMs >= this.connectionsMaxIdleMs) {
        e.connection = undefined;
        this.stats.idleClosed++;
        this.logger.debug('closing idle connection', { broker: c.broker, nodeId: c.nodeId, purpose: e.purpose, idleMs: c.idleMs });
        void c.close();
      } else open++;
    }
    if (open === 0) {
      clearInterval(this.idleTimer);
      this.idleTimer = undefined;
    }
  }
}
