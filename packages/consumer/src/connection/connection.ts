/**
 * One TCP or TLS connection to one broker: ApiVersions, optional SASL, then pipelined requests.
 *
 * The connection is the small owner of the lifecycle (socket, state, close and destroy) that wires
 * three parts, each the one owner of its state, changed through its methods (the layout of
 * undici's client: lifecycle and queue apart from protocol handling):
 *  - handshake.ts: ApiVersions, SASL, KIP-368 re-authentication; the negotiated versions.
 *  - request-queue.ts: correlation ids, requests in flight and held back, the broker's throttle,
 *    per-request timeouts.
 *  - receiver.ts: socket bytes -> frames (the socket reader, i.e. @kwire/protocol's one frame
 *    splitter), the frame bounds, frame leases from the frame pool, response decoding.
 *
 * Lifecycle: connect (socketConnectionSetupTimeoutMs covers TCP + TLS) -> ApiVersions -> SASL when
 * `sasl` is set -> ready. Connection.connect() resolves only then. A response that does not match
 * the oldest request in flight, or a request timing out in flight, destroys the connection:
 * a late response could otherwise be matched to the wrong request.
 *
 * Failure: destroy(reason) fails every pending request (the request at fault with `reason`
 * itself, the others with a ConnectionError whose cause is `reason`), closes the socket and
 * emits 'close' with the reason once the socket is gone. Nothing throws out of a socket callback
 * and no promise is left without a handler.
 */
import { EventEmitter } from 'node:events';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { ApiDefinition, BrokerVersionRange, Input } from '@kwire/protocol';
import { AuthenticationError, ClosedError, ConnectionError } from '../errors.js';
import type { Logger } from '../logger.js';
import { Handshake } from './handshake.js';
import { resolveConnectionConfig, validateAddress, type ConnectionOptions, type ResolvedConnectionConfig } from './options.js';
import { ResponseReceiver, type ResponseFrameLease } from './receiver.js';
import { RequestQueue, type Pending, type RequestOptions, type SubmitOptions } from './request-queue.js';

export { decodeResponseBody, type ResponseFrameLease } from './receiver.js';
export { FETCH_RESPONSE_MARGIN_BYTES, type RequestOptions } from './request-queue.js';

/** TLS verification failures: a configuration problem, not a network one, so not retriable. */
const TLS_TRUST_ERRORS = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
]);

/** Socket failures during a TLS handshake that mean the peer does not speak TLS on this port. */
const TLS_NOT_SPOKEN = new Set(['ECONNRESET', 'EPIPE', 'ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG', 'ERR_SSL_HTTP_REQUEST']);
const TLS_NOT_SPOKEN_HINT = "the server does not complete a TLS handshake on this port: is it a PLAINTEXT or SASL_PLAINTEXT listener? remove `ssl`, or use the port of the broker's SSL listener";

export type ConnectionState = 'connecting' | 'negotiating' | 'authenticating' | 'ready' | 'closing' | 'closed';

export interface ConnectionStats {
  requestsSent: number;
  responsesReceived: number;
  /** SASL authentications completed, the first one included. */
  authentications: number;
  reauthentications: number;
  throttleEvents: number;
  throttledMs: number;
  /** Reads and frames as the socket reader saw them. */
  reads: number;
  directReads: number;
  bytesRead: number;
  largeFrames: number;
}

export interface ConnectionEvents {
  /** The connection is gone; `reason` is undefined after a clean close(). Emitted once. */
  close: [reason: Error | undefined];
  /** A KIP-368 re-authentication completed. */
  reauthenticated: [info: { mechanism: string; sessionLifetimeMs: number }];
}

export class Connection extends EventEmitter<ConnectionEvents> {
  readonly host: string;
  readonly port: number;
  readonly nodeId: number | undefined;
  /** "host:port", for messages. */
  readonly broker: string;

  private readonly config: ResolvedConnectionConfig;
  private readonly logger: Logger;
  private readonly queue: RequestQueue;
  private readonly handshake: Handshake;
  private readonly receiver: ResponseReceiver;
  private socket: Socket | undefined;
  private socketClosed = false;
  /** The TCP connection is up (for TLS: the handshake may still be running). */
  private tcpConnected = false;
  private _state: ConnectionState = 'connecting';
  private closeTimer: NodeJS.Timeout | undefined;
  private connectWaiter: { resolve(): void; reject(err: Error): void; timer: NodeJS.Timeout } | undefined;
  private closeReason: Error | undefined;
  private closeEmitted = false;
  private readonly closed: Promise<void>;
  private resolveClosed!: () => void;

  /** Opens a connection and resolves once it is ready (ApiVersions and SASL done). */
  static async connect(options: ConnectionOptions): Promise<Connection> {
    const connection = new Connection(options);
    await connection.open();
    return connection;
  }

  /** Validates the options (ConfigError) without connecting; open() starts. Prefer Connection.connect(). */
  constructor(options: ConnectionOptions) {
    super();
    const { host, port } = validateAddress(options?.host, options?.port);
    this.config = resolveConnectionConfig(options);
    this.host = host;
    this.port = port;
    this.nodeId = options.nodeId;
    this.broker = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    this.logger = this.config.logger;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    const broker = this.broker;
    const nodeId = this.nodeId;
    this.queue = new RequestQueue(
      {
        broker,
        nodeId,
        sending: () => this._state === 'ready' || this._state === 'closing',
        write: (bytes) => this.socket!.write(bytes),
        version: (api) => this.handshake.version(api),
        timedOut: (p, err) => this.fail(err, p),
        dequeued: () => this.maybeFinishClose(),
      },
      this.config,
    );
    this.handshake = new Handshake(
      {
        broker,
        nodeId,
        isReady: () => this._state === 'ready',
        submit: (api, body, opts) => this.submit(api, body, opts),
        fail: (err) => this.fail(err, undefined),
        reauthenticated: (info) => this.emit('reauthenticated', info),
        resume: () => (this._state === 'closing' ? this.afterResponse() : this.queue.flush()),
      },
      this.config,
      this.queue,
    );
    this.receiver = new ResponseReceiver(
      {
        broker,
        isClosed: () => this._state === 'closed',
        fail: (err, culprit) => this.fail(err, culprit),
        answered: (p, throttleTimeMs) => {
          if (throttleTimeMs > 0) this.queue.throttle(throttleTimeMs, p.api);
          this.afterResponse();
        },
      },
      this.config,
      this.queue,
    );
  }

  /** A snapshot of the counters (the reader's figures included). */
  get stats(): ConnectionStats {
    const r = this.receiver.readerStats;
    const q = this.queue.counters;
    const h = this.handshake.counters;
    return {
      requestsSent: q.requestsSent,
      responsesReceived: this.receiver.responsesReceived,
      authentications: h.authentications,
      reauthentications: h.reauthentications,
      throttleEvents: q.throttleEvents,
      throttledMs: q.throttledMs,
      reads: r.reads,
      directReads: r.directReads,
      bytesRead: r.bytes,
      largeFrames: r.largeFrames,
    };
  }

  get state(): ConnectionState {
    return this._state;
  }

  get ready(): boolean {
    return this._state === 'ready';
  }

  /** Requests sent and not answered yet. */
  get inFlight(): number {
    return this.queue.inFlight;
  }

  /** Requests waiting to be sent (throttle or re-authentication). */
  get queued(): number {
    return this.queue.queued;
  }

  /** Milliseconds since the last request or response; 0 while anything is pending. */
  get idleMs(): number {
    return this.queue.inFlight + this.queue.queued > 0 ? 0 : Date.now() - this.queue.lastActivity;
  }

  /** The broker's version ranges by api key, from ApiVersions on this connection. */
  get apiVersions(): ReadonlyMap<number, BrokerVersionRange> {
    return this.handshake.apiVersions;
  }

  /** The ApiVersions version the broker answered (-1 before). */
  get apiVersionsVersion(): number {
    return this.handshake.apiVersionsVersion;
  }

  /**
   * The version to use for `api` on this connection: the highest both kwire and the broker
   * implement (cached). Throws a KafkaProtocolError naming the API and both ranges when none is.
   */
  version(api: ApiDefinition<any, any>): number {
    return this.handshake.version(api);
  }

  /** Sends a request and resolves with the decoded response body. */
  // NoInfer: the API alone fixes the types; the body is checked against them (inferring from the
  // body too would let an Input<...> typed variable turn Req into Input<Input<...>>).
  request<Req, Res>(api: ApiDefinition<Req, Res>, body: NoInfer<Input<Req>>, options?: RequestOptions): Promise<Res> {
    return this.submit(api, body, { timeoutMs: options?.timeoutMs, version: options?.version }) as Promise<Res>;
  }

  /**
   * Sends a request and resolves with the undecoded response frame, owned by the caller until
   * release() (e.g. a Fetch frame whose record batches are decoded lazily). Decode it later with
   * decodeResponseBody().
   */
  requestFrame<Req>(api: ApiDefinition<Req, any>, body: NoInfer<Input<Req>>, options?: RequestOptions): Promise<ResponseFrameLease> {
    return this.submit(api, body, { timeoutMs: options?.timeoutMs, version: options?.version, raw: true }) as Promise<ResponseFrameLease>;
  }

  /**
   * Stops taking requests, waits for those in flight (at most `timeoutMs`, default closeTimeoutMs;
   * then they fail with ClosedError), ends the socket. Resolves once the socket is closed. Never rejects.
   */
  close(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this._state === 'closed' || this._state === 'closing') return this.closed;
    if (this._state !== 'ready') {
      // Still connecting: nothing worth waiting for.
      this.destroy(new ClosedError(`connection to ${this.broker}`));
      return this.closed;
    }
    this._state = 'closing';
    this.handshake.cancelDue();
    const timeoutMs = options.timeoutMs ?? this.config.closeTimeoutMs;
    this.logger.debug('closing connection', { broker: this.broker, nodeId: this.nodeId, inFlight: this.queue.inFlight, queued: this.queue.queued });
    if (this.queue.drained) this.finishClose();
    else {
      this.queue.flush();
      this.closeTimer = setTimeout(() => {
        this.destroy(new ClosedError(`connection to ${this.broker} (requests still pending ${timeoutMs} ms after close())`));
      }, timeoutMs);
    }
    return this.closed;
  }

  /** Closes at once: every pending request fails with `reason` (or ClosedError), 'close' gets `reason`. */
  destroy(reason?: Error): void {
    this.fail(reason, undefined);
  }

  /** Resolves once the connection is closed (for whatever reason). */
  whenClosed(): Promise<void> {
    return this.closed;
  }

  /** Why the connection closed; undefined while open or after a clean close. */
  get closeError(): Error | undefined {
    return this.closeReason;
  }

  // ---- setup ------------------------------------------------------------------------------

  /** Connects, negotiates versions, authenticates. Rejects (and destroys) on any failure. */
  async open(): Promise<this> {
    if (this.socket !== undefined) throw new Error('open() called twice');
    try {
      await this.connectSocket();
      this._state = 'negotiating';
      await this.handshake.negotiateApiVersions();
      if (this.config.sasl) {
        this._state = 'authenticating';
        await this.handshake.authenticate();
      }
      if (this._state !== 'authenticating' && this._state !== 'negotiating') throw this.closeReason ?? new ClosedError(`connection to ${this.broker}`);
      this._state = 'ready';
      this.logger.debug('connection ready', { broker: this.broker, nodeId: this.nodeId, apiVersionsVersion: this.handshake.apiVersionsVersion });
      this.queue.flush();
      return this;
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      this.destroy(e);
      throw e;
    }
  }

  private connectSocket(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onread = this.receiver.onread;
      const ssl = this.config.ssl;
      let socket: Socket;
      let readyEvent: string;
      if (ssl !== undefined) {
        const servername = ssl.servername ?? (isIP(this.host) ? undefined : this.host);
        socket = tlsConnect({ ...ssl, host: this.host, port: this.port, servername, onread } as never);
        readyEvent = 'secureConnect';
      } else {
        socket = netConnect({ host: this.host, port: this.port, onread });
        readyEvent = 'connect';
      }
      this.socket = socket;
      // Requests are small and latency matters more than segment count (the Java client does the same).
      socket.setNoDelay(true);
      socket.setKeepAlive(true);
      socket.once('connect', () => (this.tcpConnected = true));
      socket.on('error', (err) => this.fail(this.socketError(err), undefined));
      socket.on('close', () => this.onSocketClose());
      const ms = this.config.socketConnectionSetupTimeoutMs;
      const timer = setTimeout(() => {
        const hint = ssl && this.tcpConnected ? `: the TCP connection is up but the TLS handshake did not finish; ${TLS_NOT_SPOKEN_HINT}` : '';
        this.fail(new ConnectionError(this.broker, `could not connect${ssl ? ' (TCP and TLS handshake)' : ''} within ${ms} ms (socketConnectionSetupTimeoutMs)${hint}`), undefined);
      }, ms);
      this.connectWaiter = { resolve, reject, timer };
      socket.once(readyEvent, () => {
        clearTimeout(timer);
        this.connectWaiter = undefined;
        this.logger.debug('connected', { broker: this.broker, nodeId: this.nodeId, tls: ssl !== undefined });
        resolve();
      });
    });
  }

  /**
   * Every request goes through here, setup traffic included: one options object says how it is
   * sent and answered (timeout, version, raw lease, setup bypass, own decoder).
   */
  private submit(api: ApiDefinition<any, any>, body: unknown, options: SubmitOptions): Promise<any> {
    if (this._state === 'closed') return Promise.reject(this.closedError());
    if (this._state === 'closing' && !options.internal) return Promise.reject(new ClosedError(`connection to ${this.broker}`));
    return this.queue.submit(api, body, options);
  }

  /** After each response: start a due re-authentication, finish a close, send what waited. */
  private afterResponse(): void {
    this.handshake.responded();
    if (this.maybeFinishClose()) return;
    this.queue.flush();
  }

  // ---- closing ----------------------------------------------------------------------------

  /** A closing connection with nothing left pending is done. */
  private maybeFinishClose(): boolean {
    if (this._state !== 'closing' || !this.queue.drained) return false;
    this.finishClose();
    return true;
  }

  private finishClose(): void {
    clearTimeout(this.closeTimer);
    this.closeTimer = undefined;
    if (this._state === 'closed') return;
    this._state = 'closed';
    this.clearTimers();
    const socket = this.socket;
    if (socket === undefined || this.socketClosed) {
      this.emitClose();
      return;
    }
    // end() flushes what was written and sends FIN; destroy once that is done (the broker
    // closes its side on FIN anyway). Nothing is pending, so there is nothing to fail.
    socket.end(() => socket.destroy());
  }

  /**
   * Destroys the connection with `reason`; `culprit` is the request the failure belongs to (a
   * timeout, an undecodable response), which gets `reason` itself.
   */
  private fail(reason: Error | undefined, culprit: Pending | undefined): void {
    if (this._state === 'closed') return;
    this._state = 'closed';
    this.closeReason = reason;
    this.clearTimers();
    if (reason) this.logger.debug('connection destroyed', { broker: this.broker, nodeId: this.nodeId, reason: reason.message });
    const waiter = this.connectWaiter;
    this.connectWaiter = undefined;
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.reject(reason ?? new ClosedError(`connection to ${this.broker}`));
    }
    const pending = this.queue.drain();
    if (culprit !== undefined && !pending.includes(culprit)) {
      clearTimeout(culprit.timer);
      culprit.timer = undefined;
      pending.unshift(culprit);
    }
    for (const p of pending) p.reject(p === culprit && reason ? reason : this.abortError(p, reason));
    // Rule 3: a frame half received goes back to the pool once no read can land in it.
    this.receiver.abandon();
    if (this.socket !== undefined && !this.socketClosed) this.socket.destroy();
    else this.emitClose();
  }

  private abortError(p: Pending, reason: Error | undefined): Error {
    if (reason === undefined) return new ClosedError(`connection to ${this.broker}`);
    // These already say what happened to the connection, and the caller should see them as such.
    if (reason instanceof ConnectionError || reason instanceof AuthenticationError || reason instanceof ClosedError) return reason;
    return new ConnectionError(this.broker, `${p.api.name} v${p.version} failed: the connection was destroyed: ${reason.message}`, { cause: reason });
  }

  private closedError(): Error {
    const r = this.closeReason;
    if (r instanceof ConnectionError || r instanceof AuthenticationError) return r;
    if (r !== undefined) return new ConnectionError(this.broker, `the connection is closed: ${r.message}`, { cause: r });
    return new ClosedError(`connection to ${this.broker}`);
  }

  private socketError(err: NodeJS.ErrnoException): Error {
    const code = err.code ?? '';
    if (this.config.ssl && TLS_TRUST_ERRORS.has(code)) {
      return new AuthenticationError(`${this.broker}: TLS: the broker's certificate was refused (${code}): ${err.message}`, { cause: err });
    }
    if (this.config.ssl && this._state === 'connecting' && this.tcpConnected && (TLS_NOT_SPOKEN.has(code) || /before secure TLS connection/.test(err.message))) {
      return new ConnectionError(this.broker, `TLS handshake failed (${code || 'no code'}: ${err.message}): ${TLS_NOT_SPOKEN_HINT}`, { cause: err });
    }
    return new ConnectionError(this.broker, `${this._state === 'connecting' ? 'could not connect' : 'socket error'}: ${err.message}`, { cause: err });
  }

  private onSocketClose(): void {
    this.socketClosed = true;
    if (this._state !== 'closed') {
      // The broker hung up (for instance after a failed authentication or an unsupported request).
      this.fail(new ConnectionError(this.broker, `the broker closed the connection${this.hangUpHint()}`), undefined);
      return;
    }
    this.emitClose();
  }

  /** Why a peer may hang up at this point of the connection's life, as advice. */
  private hangUpHint(): string {
    if (this._state === 'connecting' && this.config.ssl) return ` during the TLS handshake: ${TLS_NOT_SPOKEN_HINT}`;
    if (this._state === 'negotiating') {
      return this.config.ssl ? ' before answering ApiVersions; check the host and port' : ' before answering ApiVersions: if this is an SSL listener, set `ssl`; otherwise check the host and port';
    }
    // A SASL listener answers ApiVersions, then hangs up on any other request before SaslHandshake.
    if (this.config.sasl === undefined && this.receiver.responsesReceived <= 1 && this._state === 'ready' && this.queue.inFlight > 0) {
      return ' after ApiVersions, at the first request: if this is a SASL_PLAINTEXT or SASL_SSL listener, set `sasl`';
    }
    return '';
  }

  private emitClose(): void {
    if (this.closeEmitted) return;
    this.closeEmitted = true;
    this.receiver.releaseAbandoned();
    this.logger.debug('connection closed', { broker: this.broker, nodeId: this.nodeId, ...(this.closeReason ? { reason: this.closeReason.message } : {}) });
    const reason = this.closeReason;
    // After the current callback: listeners may call back into us, and the pool's bookkeeping
    // must not run in the middle of a failing read.
    process.nextTick(() => {
      this.emit('close', reason);
      this.resolveClosed();
    });
  }

  private clearTimers(): void {
    clearTimeout(this.closeTimer);
    this.closeTimer = undefined;
    this.handshake.stop();
    this.queue.stopThrottleTimer();
  }
}
