/**
 * One TCP or TLS connection to one broker: ApiVersions, optional SASL, then pipelined requests.
 *
 * Lifecycle: connect (socketConnectionSetupTimeoutMs covers TCP + TLS) -> ApiVersions (v5, or the
 * broker's maximum after an UNSUPPORTED_VERSION answer in the v0 format) -> SaslHandshake v1 +
 * SaslAuthenticate v2 when `sasl` is set -> ready. Connection.connect() resolves only then.
 *
 * Requests: each gets a correlation id, is written at once (several may be in flight: the broker
 * answers one connection's requests strictly in order), and is matched to the response at the
 * head of the FIFO; a response whose correlation id is not the head's means the stream is out of
 * step, and the connection is destroyed. Each request has its own timeout (requestTimeoutMs, or a
 * longer one for long polls such as Fetch or JoinGroup); a timeout also destroys the connection,
 * because a late response could otherwise be matched to the wrong request.
 *
 * Holds: new requests wait (in order) while the broker throttles us (KIP-219: after a response
 * with throttleTimeMs > 0, nothing is sent until that time has passed) and while the connection
 * re-authenticates (KIP-368: when SaslAuthenticate reported a session lifetime, a new handshake
 * runs at 85-95% of it, once the requests already in flight are answered).
 *
 * Memory: see socket-reader.ts for the ownership of read bytes. request() decodes; the decoded
 * body may keep Buffer views (bytes fields, unknown tagged fields), so it is decoded from memory
 * that stays valid: a small frame is copied out of the read buffer (exact size), a large one is
 * already its own buffer. requestFrame() hands out the frame itself, owned by the caller until
 * release(): a large frame's memory comes from the frame pool and goes back to it on release().
 *
 * Failure: destroy(reason) fails every pending request (the request at fault with `reason`
 * itself, the others with a ConnectionError whose cause is `reason`), closes the socket and
 * emits 'close' with the reason once the socket is gone. Nothing throws out of a socket callback
 * and no promise is left without a handler.
 */
import { EventEmitter } from 'node:events';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import {
  ApiVersions,
  decodeResponseFrame,
  errorFor,
  isKafkaProtocolError,
  KafkaProtocolError,
  negotiateVersion,
  readResponseHeader,
  Reader,
  responseHeaderVersion,
  SaslAuthenticate,
  SaslHandshake,
  toProtocolError,
  writeRequestFrame,
  Writer,
  type ApiDefinition,
  type BrokerVersionRange,
  type Input,
} from '@kwire/protocol';
import { AuthenticationError, BrokerResponseError, ClosedError, ConnectionError, isKafkaError, RequestTimeoutError } from '../errors.js';
import type { Logger } from '../logger.js';
import { CLIENT_SOFTWARE_NAME, CLIENT_SOFTWARE_VERSION, resolveConnectionConfig, validateAddress, type ConnectionOptions, type ResolvedConnectionConfig } from './options.js';
import { kafkaMechanismName, knownSecrets, principalHint, runSaslMechanism } from './sasl/index.js';
import { describeBytes, foreignProtocol } from './sniff.js';
import { FrameReader } from './socket-reader.js';

const UNSUPPORTED_VERSION = 35;
const UNSUPPORTED_SASL_MECHANISM = 33;

/**
 * APIs whose responses start with ThrottleTimeMs in every version kwire implements, so that a raw
 * frame's throttle time can be read without decoding it (the others: ApiVersions has it after
 * ApiKeys, Produce at the end, the SASL APIs not at all).
 */
const THROTTLE_FIRST = new Set([1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 19, 20, 37, 68]);

/**
 * The most a response to ApiVersions, SaslHandshake or SaslAuthenticate may announce: real ones
 * are a few hundred bytes (ApiVersions of a 4.x broker: about 700), so anything near this is a
 * peer that is not a Kafka listener, refused before a byte of it is allocated.
 */
const SETUP_RESPONSE_BYTES = 1024 * 1024;
const SETUP_APIS = new Set([17, 18, 36]);

/**
 * What a Fetch answer may carry beyond the maxBytes it asked for: the broker still returns the
 * first batch of the first non-empty partition when that batch alone is larger (KIP-74; bounded by
 * the topic's max.message.bytes, 1 MiB by default), plus the per-partition fields and aborted
 * transaction lists, which maxBytes does not count.
 */
export const FETCH_RESPONSE_MARGIN_BYTES = 16 * 1024 * 1024;

/** Frames below this are copied into a plain allocation for requestFrame(); above, into the pool. */
const SMALL_COPY_BYTES = 4096;

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

export interface RequestOptions {
  /**
   * This request's timeout, counted from when it is written to the socket (as the Java client's
   * request.timeout.ms); default requestTimeoutMs. A long poll (Fetch, JoinGroup) passes its own
   * wait plus requestTimeoutMs.
   */
  timeoutMs?: number;
  /** The version to send; default version(api), the highest both sides implement. */
  version?: number;
}

/** How one request is sent and answered (submit()). */
interface SubmitOptions extends RequestOptions {
  /** Resolve with a ResponseFrameLease rather than a decoded body (requestFrame). */
  raw?: boolean;
  /** Setup traffic (ApiVersions, SASL): bypasses the holds that keep ordinary requests back. */
  internal?: boolean;
  /** Decodes the frame instead of the API's own decoder (ApiVersions' v0 fallback). */
  decode?: (frame: Buffer) => unknown;
}

/** A response frame handed out undecoded (requestFrame). The caller owns `frame` until release(). */
export interface ResponseFrameLease {
  /** The whole frame: int32 size, response header, body. */
  readonly frame: Buffer;
  readonly apiKey: number;
  readonly version: number;
  readonly correlationId: number;
  /** Offset in `frame` where the body starts (after the v0 or v1 response header). */
  readonly bodyOffset: number;
  /** ThrottleTimeMs read from the body (0 where the API has none first). */
  readonly throttleTimeMs: number;
  /** Gives the memory back; `frame` and every view into it are dead afterwards. Idempotent. */
  release(): void;
}

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

interface Pending {
  readonly api: ApiDefinition<any, any>;
  readonly version: number;
  readonly correlationId: number;
  readonly bytes: Buffer;
  /** Resolve with a ResponseFrameLease rather than a decoded body. */
  readonly raw: boolean;
  /** Setup traffic (ApiVersions, SASL): bypasses the holds that keep ordinary requests back. */
  readonly internal: boolean;
  readonly decode: ((frame: Buffer) => unknown) | undefined;
  readonly timeoutMs: number;
  /** When the request times out (Date.now()): counted from submit, so time held back counts too. */
  readonly deadline: number;
  /** The largest response frame (size prefix excluded) admitted for this request. */
  readonly maxResponseBytes: number;
  timer: NodeJS.Timeout | undefined;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

export class Connection extends EventEmitter<ConnectionEvents> {
  readonly host: string;
  readonly port: number;
  readonly nodeId: number | undefined;
  /** "host:port", for messages. */
  readonly broker: string;

  private readonly config: ResolvedConnectionConfig;
  private readonly logger: Logger;
  private readonly reader: FrameReader;
  private readonly writer = new Writer(16 * 1024);
  private readonly decodeReader = new Reader(Buffer.alloc(0));
  private socket: Socket | undefined;
  private socketClosed = false;
  /** The TCP connection is up (for TLS: the handshake may still be running). */
  private tcpConnected = false;
  private _state: ConnectionState = 'connecting';

  private correlationId = 0;
  private readonly inflight: Pending[] = [];
  private readonly held: Pending[] = [];

  private throttledUntil = 0;
  private throttleTimer: NodeJS.Timeout | undefined;
  /** Ordinary requests wait while this is set (a re-authentication is due or running). */
  private authHold = false;
  private reauthDue = false;
  private reauthTimer: NodeJS.Timeout | undefined;
  private closeTimer: NodeJS.Timeout | undefined;

  private readonly brokerVersions = new Map<number, BrokerVersionRange>();
  private readonly negotiated = new Map<number, number>();
  private _apiVersionsVersion = -1;

  /** The frame the reader is assembling came from the pool (its head request is a requestFrame). */
  private largeFromPool = false;
  private abandonedFrame: Buffer | undefined;

  private connectWaiter: { resolve(): void; reject(err: Error): void; timer: NodeJS.Timeout } | undefined;
  private closeReason: Error | undefined;
  private closeEmitted = false;
  private readonly closed: Promise<void>;
  private resolveClosed!: () => void;
  /** Strings that must never appear in a message: the password, and the latest OAUTHBEARER tokens. */
  private readonly secrets: string[];
  private readonly tokens: string[] = [];
  private lastActivity = Date.now();

  private readonly counters = {
    requestsSent: 0,
    responsesReceived: 0,
    authentications: 0,
    reauthentications: 0,
    throttleEvents: 0,
    throttledMs: 0,
  };

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
    this.secrets = this.config.sasl ? knownSecrets(this.config.sasl) : [];
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    this.reader = new FrameReader(
      {
        allocate: (size) => this.allocateFrame(size),
        frame: (frame, backing) => this.onFrame(frame, backing),
        admit: (size, streamOffset, bytes, start, end) => this.admitFrame(size, streamOffset, bytes, start, end),
      },
      { readBufferBytes: this.config.readBufferBytes, maxFrameBytes: this.config.maxFrameBytes },
    );
  }

  /** A snapshot of the counters (the reader's figures included). */
  get stats(): ConnectionStats {
    const r = this.reader.stats;
    return { ...this.counters, reads: r.reads, directReads: r.directReads, bytesRead: r.bytes, largeFrames: r.largeFrames };
  }

  get state(): ConnectionState {
    return this._state;
  }

  get ready(): boolean {
    return this._state === 'ready';
  }

  /** Requests sent and not answered yet. */
  get inFlight(): number {
    return this.inflight.length;
  }

  /** Requests waiting to be sent (throttle or re-authentication). */
  get queued(): number {
    return this.held.length;
  }

  /** Milliseconds since the last request or response; 0 while anything is pending. */
  get idleMs(): number {
    return this.inflight.length + this.held.length > 0 ? 0 : Date.now() - this.lastActivity;
  }

  /** The broker's version ranges by api key, from ApiVersions on this connection. */
  get apiVersions(): ReadonlyMap<number, BrokerVersionRange> {
    return this.brokerVersions;
  }

  /** The ApiVersions version the broker answered (-1 before). */
  get apiVersionsVersion(): number {
    return this._apiVersionsVersion;
  }

  /**
   * The version to use for `api` on this connection: the highest both kwire and the broker
   * implement (cached). Throws a KafkaProtocolError naming the API and both ranges when none is.
   */
  version(api: ApiDefinition<any, any>): number {
    let v = this.negotiated.get(api.apiKey);
    if (v === undefined) {
      v = negotiateVersion(api, this.brokerVersions.get(api.apiKey));
      this.negotiated.set(api.apiKey, v);
    }
    return v;
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
    clearTimeout(this.reauthTimer);
    this.reauthTimer = undefined;
    if (this.reauthDue) {
      // Due but not started: no point renewing a session we are about to end; let the held
      // requests go (a re-authentication already running finishes first, then they go).
      this.reauthDue = false;
      this.authHold = false;
    }
    const timeoutMs = options.timeoutMs ?? this.config.closeTimeoutMs;
    this.logger.debug('closing connection', { broker: this.broker, nodeId: this.nodeId, inFlight: this.inflight.length, queued: this.held.length });
    if (this.inflight.length + this.held.length === 0 && !this.authHold) this.finishClose();
    else {
      this.flush();
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
      await this.negotiateApiVersions();
      if (this.config.sasl) {
        this._state = 'authenticating';
        await this.authenticateWithin(false);
      }
      if (this._state !== 'authenticating' && this._state !== 'negotiating') throw this.closeReason ?? new ClosedError(`connection to ${this.broker}`);
      this._state = 'ready';
      this.logger.debug('connection ready', { broker: this.broker, nodeId: this.nodeId, apiVersionsVersion: this._apiVersionsVersion });
      this.flush();
      return this;
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      this.destroy(e);
      throw e;
    }
  }

  private connectSocket(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onread = {
        buffer: this.reader.onread.buffer,
        callback: (nread: number) => this.onSocketRead(nread),
      };
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

  private async negotiateApiVersions(): Promise<void> {
    let version = ApiVersions.maxVersion;
    for (let attempt = 0; ; attempt++) {
      const v = version;
      // decodeResponseFrame knows that an UNSUPPORTED_VERSION answer is written in the v0 format.
      const res = (await this.submit(
        ApiVersions,
        { clientSoftwareName: CLIENT_SOFTWARE_NAME, clientSoftwareVersion: CLIENT_SOFTWARE_VERSION },
        { version: v, internal: true, decode: (frame) => decodeResponseFrame(ApiVersions.apiKey, v, frame).body },
      )) as { errorCode: number; apiKeys: { apiKey: number; minVersion: number; maxVersion: number }[] };
      if (res.errorCode === UNSUPPORTED_VERSION && attempt === 0) {
        const own = res.apiKeys.find((k) => k.apiKey === ApiVersions.apiKey);
        const brokerMax = own ? own.maxVersion : 0;
        if (brokerMax >= v || brokerMax < ApiVersions.minVersion) {
          throw new KafkaProtocolError(`ApiVersions: the broker refused v${v} but lists v${own?.minVersion ?? '?'}-${own?.maxVersion ?? '?'}`, {
            reason: 'unsupported-version',
            apiKey: ApiVersions.apiKey,
            apiName: 'ApiVersions',
          });
        }
        this.logger.debug('ApiVersions downgrade', { broker: this.broker, from: v, to: brokerMax });
        version = brokerMax;
        continue;
      }
      if (res.errorCode !== 0) throw new BrokerResponseError(res.errorCode, `ApiVersions v${v} to ${this.broker}`);
      for (const k of res.apiKeys) this.brokerVersions.set(k.apiKey, { minVersion: k.minVersion, maxVersion: k.maxVersion });
      this._apiVersionsVersion = v;
      return;
    }
  }

  // ---- SASL -------------------------------------------------------------------------------

  /**
   * authenticate() under one deadline for the whole exchange (handshake, every round, the token
   * provider, PBKDF2): socketConnectionSetupTimeoutMs. Each request already has its own timeout,
   * but a peer answering every round just in time, or a token provider that never settles, would
   * otherwise hold a connect (or a re-authentication, with requests held behind it) forever.
   */
  private async authenticateWithin(reauth: boolean): Promise<void> {
    const ms = this.config.socketConnectionSetupTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        const err = new ConnectionError(
          this.broker,
          `SASL ${kafkaMechanismName(this.config.sasl!)} ${reauth ? 're-' : ''}authentication did not complete within ${ms} ms (socketConnectionSetupTimeoutMs); the connection is closed`,
        );
        this.fail(err, undefined);
        reject(err);
      }, ms);
    });
    try {
      // race() handles the loser's rejection too: nothing is left unhandled.
      await Promise.race([this.authenticate(reauth), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async authenticate(reauth: boolean): Promise<void> {
    const sasl = this.config.sasl!;
    const mechanism = kafkaMechanismName(sasl);
    if (sasl.mechanism === 'plain' && this.config.ssl === undefined && !reauth) warnPlainOverPlaintext(this.logger, this.broker);
    const handshake = await this.submit(SaslHandshake, { mechanism }, { version: this.version(SaslHandshake), internal: true });
    if (handshake.errorCode !== 0) {
      if (handshake.errorCode === UNSUPPORTED_SASL_MECHANISM) {
        throw new AuthenticationError(`${this.broker}: the broker does not enable SASL mechanism ${mechanism} (it enables: ${handshake.mechanisms.join(', ') || 'none'})`);
      }
      const e = errorFor(handshake.errorCode);
      throw new AuthenticationError(`${this.broker}: SaslHandshake for ${mechanism} failed: ${e.name} (${e.code})`);
    }
    const authVersion = this.version(SaslAuthenticate);
    let sessionLifetimeMs = 0;
    const exchange = async (authBytes: Buffer): Promise<Buffer> => {
      const res = await this.submit(SaslAuthenticate, { authBytes }, { version: authVersion, internal: true });
      if (res.errorCode !== 0) {
        const e = errorFor(res.errorCode);
        const said = res.errorMessage ? this.redact(res.errorMessage) : e.message;
        throw new AuthenticationError(`${this.broker}: SASL ${mechanism} authentication of ${principalHint(sasl)} failed: ${said} (${e.name})`);
      }
      sessionLifetimeMs = Number(res.sessionLifetimeMs);
      return res.authBytes;
    };
    await runSaslMechanism(sasl, exchange, (token) => {
      // The two latest tokens: the current exchange's and the one before (a broker message may
      // still quote it).
      this.tokens.push(token);
      if (this.tokens.length > 2) this.tokens.shift();
    });
    this.counters.authentications++;
    if (reauth) this.counters.reauthentications++;
    this.logger.debug(reauth ? 'reauthenticated' : 'authenticated', {
      broker: this.broker,
      nodeId: this.nodeId,
      mechanism,
      ...(sasl.mechanism === 'oauthbearer' ? {} : { username: sasl.username }),
      sessionLifetimeMs,
    });
    this.scheduleReauth(sessionLifetimeMs);
    if (reauth) this.emit('reauthenticated', { mechanism, sessionLifetimeMs });
  }

  /**
   * KIP-368: re-authenticate before the session the broker granted ends. 85-95% of the lifetime
   * (as the Java client), so that many connections opened together do not all re-authenticate at
   * once, and so that the requests in flight at that moment have time to finish first.
   */
  private scheduleReauth(sessionLifetimeMs: number): void {
    clearTimeout(this.reauthTimer);
    this.reauthTimer = undefined;
    if (!(sessionLifetimeMs > 0)) return;
    const delay = Math.floor(sessionLifetimeMs * (0.85 + 0.1 * Math.random()));
    this.reauthTimer = setTimeout(() => {
      this.reauthTimer = undefined;
      if (this._state !== 'ready') return;
      this.reauthDue = true;
      this.authHold = true;
      this.maybeReauthenticate();
    }, delay);
    // A pending re-authentication alone should not keep a process alive.
    this.reauthTimer.unref();
  }

  /** Starts a due re-authentication once no ordinary request is in flight. */
  private maybeReauthenticate(): void {
    if (!this.reauthDue || this._state !== 'ready' || this.inflight.length > 0) return;
    this.reauthDue = false;
    this.logger.debug('reauthenticating', { broker: this.broker, nodeId: this.nodeId });
    this.authenticateWithin(true).then(
      () => {
        this.authHold = false;
        if (this._state === 'closing') this.afterResponse();
        else this.flush();
      },
      (err: Error) => {
        this.logger.warn('re-authentication failed; closing the connection', { broker: this.broker, nodeId: this.nodeId, error: err.message });
        this.fail(err, undefined);
      },
    );
  }

  private redact(text: string): string {
    let out = text;
    for (const s of [...this.secrets, ...this.tokens]) if (s.length > 0) out = out.split(s).join('***');
    return out;
  }

  // ---- sending ----------------------------------------------------------------------------

  private submit(api: ApiDefinition<any, any>, body: unknown, options: SubmitOptions): Promise<any> {
    const { raw = false, internal = false, decode } = options;
    return new Promise((resolve, reject) => {
      if (this._state === 'closed') return reject(this.closedError());
      if (this._state === 'closing' && !internal) return reject(new ClosedError(`connection to ${this.broker}`));
      let version: number;
      let bytes: Buffer;
      let timeoutMs: number;
      let maxResponseBytes: number;
      const correlationId = (this.correlationId = (this.correlationId + 1) & 0x7fffffff);
      try {
        timeoutMs = options.timeoutMs ?? this.config.requestTimeoutMs;
        if (!(Number.isSafeInteger(timeoutMs) && timeoutMs > 0)) throw new RangeError(`timeoutMs must be a positive integer, got ${timeoutMs}`);
        version = options.version ?? this.version(api);
        bytes = this.encode(api, version, correlationId, body);
        maxResponseBytes = this.responseLimit(api, body);
      } catch (err) {
        return reject(err);
      }
      const p: Pending = { api, version, correlationId, bytes, raw, internal, decode, timeoutMs, deadline: Date.now() + timeoutMs, maxResponseBytes, timer: undefined, resolve, reject };
      if (internal || (this.held.length === 0 && this.canSend())) this.send(p);
      else {
        // Held back (throttled, re-authenticating): request.timeout.ms runs from now, not from
        // whenever the hold ends.
        p.timer = setTimeout(() => this.onHeldTimeout(p), timeoutMs);
        this.held.push(p);
        this.scheduleFlush();
      }
    });
  }

  private encode(api: ApiDefinition<any, any>, version: number, correlationId: number, body: unknown): Buffer {
    // Writer rule: finished bytes are never rewritten, so the socket may queue them as they are.
    return writeRequestFrame(this.writer, api, version, correlationId, this.config.clientId, body);
  }

  /**
   * How large an answer to this request may be (item 1 of the hostile-peer rules: memory follows
   * what we asked for, not what a peer announces): a Fetch its own maxBytes plus the KIP-74
   * margin, the setup APIs a small fixed bound, the rest maxResponseBytes; never above maxFrameBytes.
   */
  private responseLimit(api: ApiDefinition<any, any>, body: unknown): number {
    const ceiling = this.config.maxFrameBytes;
    if (api.apiKey === 1) {
      const maxBytes = (body as { maxBytes?: unknown } | undefined)?.maxBytes;
      return typeof maxBytes === 'number' && maxBytes > 0 ? Math.min(ceiling, maxBytes + FETCH_RESPONSE_MARGIN_BYTES) : ceiling;
    }
    if (SETUP_APIS.has(api.apiKey)) return Math.min(ceiling, SETUP_RESPONSE_BYTES);
    return Math.min(ceiling, this.config.maxResponseBytes);
  }

  private canSend(): boolean {
    return this._state === 'ready' || this._state === 'closing' ? !this.authHold && Date.now() >= this.throttledUntil : false;
  }

  private send(p: Pending): void {
    clearTimeout(p.timer);
    p.timer = setTimeout(() => this.onTimeout(p), Math.max(1, p.deadline - Date.now()));
    this.inflight.push(p);
    this.counters.requestsSent++;
    this.lastActivity = Date.now();
    this.socket!.write(p.bytes);
  }

  /** Sends what the holds kept back, in order, while they allow. */
  private flush(): void {
    while (this.held.length > 0 && this.canSend()) this.send(this.held.shift()!);
    if (this.held.length > 0) this.scheduleFlush();
  }

  private scheduleFlush(): void {
    // Re-authentication flushes when it ends; only the throttle needs a timer.
    const wait = this.throttledUntil - Date.now();
    if (wait <= 0 || this.throttleTimer !== undefined) return;
    this.throttleTimer = setTimeout(() => {
      this.throttleTimer = undefined;
      this.flush();
    }, wait);
  }

  /**
   * A request that never left the queue: it fails alone (nothing was sent, so the connection's
   * stream is still in step), saying what held it.
   */
  private onHeldTimeout(p: Pending): void {
    p.timer = undefined;
    const i = this.held.indexOf(p);
    if (i < 0) return;
    this.held.splice(i, 1);
    const why = this.authHold ? 'while the connection re-authenticated' : `while the broker throttled this client (until ${new Date(this.throttledUntil).toISOString()})`;
    p.reject(new RequestTimeoutError(`${p.api.name} v${p.version} to ${this.broker} waited ${p.timeoutMs} ms without being sent, ${why}`));
    if (this._state === 'closing' && this.inflight.length + this.held.length === 0 && !this.authHold) this.finishClose();
  }

  private onTimeout(p: Pending): void {
    p.timer = undefined;
    const err = new RequestTimeoutError(
      `${p.api.name} v${p.version} to ${this.broker} (correlation id ${p.correlationId}) got no response within ${p.timeoutMs} ms; ` +
        'the connection is closed, as a late response could no longer be matched',
    );
    this.fail(err, p);
  }

  // ---- receiving --------------------------------------------------------------------------

  private onSocketRead(nread: number): boolean {
    try {
      return this.reader.onRead(nread);
    } catch (err) {
      // Nothing may escape a socket callback: it would be an uncaught exception. A framing error
      // (bad size prefix) belongs to the response being read, i.e. to the oldest request in flight.
      const e = isKafkaProtocolError(err) || isKafkaError(err) ? (err as Error) : toProtocolError(err);
      this.fail(e, this.inflight[0]);
      return false;
    }
  }

  /**
   * Every size prefix, before memory is taken for it: the peer's first bytes are checked for TLS,
   * HTTP and SSH (a wrong port or a missing `ssl`), then the size against what the request at the
   * head of the FIFO (the one this frame answers) admits.
   */
  private admitFrame(size: number, streamOffset: number, bytes: Buffer, start: number, end: number): void {
    // Only the first frame's bytes are looked at (a view made once per connection, not per frame).
    const head = streamOffset === 0 ? bytes.subarray(start, Math.min(end, start + 16)) : EMPTY;
    if (streamOffset === 0) {
      const foreign = foreignProtocol(head, this.config.ssl !== undefined);
      if (foreign !== undefined) throw new ConnectionError(this.broker, `the server ${foreign} (first bytes: ${describeBytes(head)})`);
    }
    const p = this.inflight[0];
    if (p === undefined) {
      throw new KafkaProtocolError(`a response frame of ${size} bytes arrived with no request in flight`, { reason: 'invalid-value', offset: streamOffset });
    }
    if (size <= p.maxResponseBytes) return;
    // Past the absolute maxFrameBytes mid-stream: the reader's own KafkaProtocolError says it.
    if (streamOffset > 0 && size > this.config.maxFrameBytes) return;
    if (streamOffset === 0) {
      throw new ConnectionError(
        this.broker,
        `the first answer announces ${size} bytes, far more than any ${p.api.name} response (at most ${p.maxResponseBytes}): ` +
          `this is probably not a Kafka listener (first bytes: ${describeBytes(head)}); check the host, the port and \`ssl\``,
      );
    }
    const why =
      p.api.apiKey === 1
        ? `its maxBytes plus a ${FETCH_RESPONSE_MARGIN_BYTES}-byte margin for one oversized batch; raise fetchMaxBytes if a single batch really is larger`
        : SETUP_APIS.has(p.api.apiKey)
          ? 'a connection setup answer is never this large'
          : 'maxResponseBytes';
    throw new ConnectionError(
      this.broker,
      `the response to ${p.api.name} v${p.version} (correlation id ${p.correlationId}) announces ${size} bytes, more than the ${p.maxResponseBytes} this request admits (${why}); the connection is closed`,
    );
  }

  private allocateFrame(size: number): Buffer {
    // Responses come in request order, so the head of the FIFO is the frame's future owner: a
    // requestFrame() caller gets pool memory (returned by release()), a decoded request a plain
    // allocation that its decoded body may keep views into.
    const head = this.inflight[0];
    this.largeFromPool = head !== undefined && head.raw;
    return this.largeFromPool ? this.config.framePool.acquire(size) : Buffer.allocUnsafe(size);
  }

  private onFrame(frame: Buffer, backing: Buffer | undefined): void {
    const pooled = backing !== undefined && this.largeFromPool;
    const p = this.inflight.shift();
    if (p === undefined || this._state === 'closed') {
      if (pooled) this.config.framePool.release(backing!);
      if (this._state === 'closed') return;
      throw new KafkaProtocolError(`a response frame of ${frame.length - 4} bytes arrived with no request in flight`, { reason: 'invalid-value' });
    }
    clearTimeout(p.timer);
    p.timer = undefined;
    this.counters.responsesReceived++;
    this.lastActivity = Date.now();
    let throttleTimeMs = 0;
    try {
      if (frame.length < 8) {
        throw new KafkaProtocolError(`a response frame of ${frame.length - 4} bytes has no correlation id`, { reason: 'truncated', offset: 0 });
      }
      const correlationId = frame.readInt32BE(4);
      if (correlationId !== p.correlationId) {
        throw new ConnectionError(
          this.broker,
          `response correlation id ${correlationId} does not match the oldest request in flight (${p.api.name} v${p.version}, correlation id ${p.correlationId}); the stream is out of step`,
        );
      }
      if (p.raw) {
        const lease = this.lease(p, frame, backing, pooled);
        throttleTimeMs = lease.throttleTimeMs;
        p.resolve(lease);
      } else {
        // Decoded bodies keep views (bytes, unknown tagged fields): decode from memory that stays valid.
        const own = backing !== undefined ? frame : Buffer.from(frame);
        const body = p.decode ? p.decode(own) : this.decode(p.api, p.version, own);
        const t = (body as { throttleTimeMs?: unknown }).throttleTimeMs;
        if (typeof t === 'number') throttleTimeMs = t;
        p.resolve(body);
      }
    } catch (err) {
      if (pooled) this.config.framePool.release(backing!);
      const e = isKafkaProtocolError(err) || isKafkaError(err) ? (err as Error) : toProtocolError(err);
      // `p` is out of the FIFO already: name it as the culprit here, then stop the reader.
      this.fail(e, p);
      throw e;
    }
    if (throttleTimeMs > 0) this.throttle(throttleTimeMs, p);
    this.afterResponse();
  }

  private decode(api: ApiDefinition<any, any>, version: number, frame: Buffer): unknown {
    const r = this.decodeReader.reset(frame, 4, frame.length);
    try {
      readResponseHeader(r, responseHeaderVersion(api.apiKey, version >= api.flexibleFrom));
      const body = api.decodeResponse(r, version);
      r.expectEnd();
      return body;
    } catch (err) {
      throw toProtocolError(err).inApi(api.apiKey, `${api.name}Response`, version);
    } finally {
      // Do not keep the frame alive through the reusable reader.
      r.reset(EMPTY);
    }
  }

  private lease(p: Pending, frame: Buffer, backing: Buffer | undefined, pooled: boolean): ResponseFrameLease {
    let owned = frame;
    let fromPool = pooled ? backing : undefined;
    if (backing === undefined) {
      // Rule 1: a small frame is a view of the read buffer: copy it out, exactly its size.
      if (frame.length < SMALL_COPY_BYTES) owned = Buffer.from(frame);
      else {
        fromPool = this.config.framePool.acquire(frame.length);
        frame.copy(fromPool, 0, 0, frame.length);
        owned = fromPool.subarray(0, frame.length);
      }
    }
    const r = this.decodeReader.reset(owned, 4, owned.length);
    let bodyOffset: number;
    let throttleTimeMs = 0;
    try {
      readResponseHeader(r, responseHeaderVersion(p.api.apiKey, p.version >= p.api.flexibleFrom));
      bodyOffset = r.offset;
      if (THROTTLE_FIRST.has(p.api.apiKey) && owned.length - bodyOffset >= 4) throttleTimeMs = owned.readInt32BE(bodyOffset);
    } catch (err) {
      // Only what this function acquired itself; the caller gives back a pooled `backing`.
      if (backing === undefined && fromPool !== undefined) this.config.framePool.release(fromPool);
      throw toProtocolError(err).inApi(p.api.apiKey, `${p.api.name}Response`, p.version);
    } finally {
      r.reset(EMPTY);
    }
    const pool = this.config.framePool;
    let released = false;
    return {
      frame: owned,
      apiKey: p.api.apiKey,
      version: p.version,
      correlationId: p.correlationId,
      bodyOffset,
      throttleTimeMs,
      release() {
        if (released) return;
        released = true;
        if (fromPool !== undefined) pool.release(fromPool);
      },
    };
  }

  private throttle(ms: number, p: Pending): void {
    // A throttle longer than request.timeout.ms would fail every request queued behind it anyway;
    // and a hostile or broken value (2^31-1 ms) must not stall the connection for weeks.
    if (ms > this.config.requestTimeoutMs) {
      this.logger.warn('broker throttle time capped at request.timeout.ms', { broker: this.broker, nodeId: this.nodeId, api: p.api.name, throttleTimeMs: ms, cappedMs: this.config.requestTimeoutMs });
      ms = this.config.requestTimeoutMs;
    }
    const until = Date.now() + ms;
    if (until > this.throttledUntil) this.throttledUntil = until;
    this.counters.throttleEvents++;
    this.counters.throttledMs += ms;
    this.logger.debug('throttled by the broker', { broker: this.broker, nodeId: this.nodeId, api: p.api.name, throttleTimeMs: ms });
  }

  /** After each response: start a due re-authentication, finish a close, send what waited. */
  private afterResponse(): void {
    if (this.reauthDue) this.maybeReauthenticate();
    if (this._state === 'closing' && this.inflight.length + this.held.length === 0 && !this.authHold) {
      this.finishClose();
      return;
    }
    if (this.held.length > 0) this.flush();
  }

  // ---- closing ----------------------------------------------------------------------------

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
    const pending = this.inflight.splice(0).concat(this.held.splice(0));
    if (culprit !== undefined && !pending.includes(culprit)) pending.unshift(culprit);
    for (const p of pending) {
      clearTimeout(p.timer);
      p.timer = undefined;
      p.reject(p === culprit && reason ? reason : this.abortError(p, reason));
    }
    // Rule 3: a frame half received goes back to the pool once no read can land in it.
    const partial = this.reader.abandon();
    if (partial !== undefined && this.largeFromPool) this.abandonedFrame = partial;
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
    if (this.config.sasl === undefined && this.counters.responsesReceived <= 1 && this._state === 'ready' && this.inflight.length > 0) {
      return ' after ApiVersions, at the first request: if this is a SASL_PLAINTEXT or SASL_SSL listener, set `sasl`';
    }
    return '';
  }

  private emitClose(): void {
    if (this.closeEmitted) return;
    this.closeEmitted = true;
    if (this.abandonedFrame !== undefined) {
      this.config.framePool.release(this.abandonedFrame);
      this.abandonedFrame = undefined;
    }
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
    clearTimeout(this.throttleTimer);
    clearTimeout(this.reauthTimer);
    clearTimeout(this.closeTimer);
    this.throttleTimer = this.reauthTimer = this.closeTimer = undefined;
    this.reauthDue = false;
  }
}

const EMPTY = Buffer.alloc(0);

/** Loggers already told that PLAIN goes over plaintext: the warning is given once per logger. */
const warnedPlain = new WeakSet<Logger>();

function warnPlainOverPlaintext(logger: Logger, broker: string): void {
  if (warnedPlain.has(logger)) return;
  warnedPlain.add(logger);
  logger.warn('SASL PLAIN over a plaintext connection: the password crosses the network unencrypted; use ssl (SASL_SSL) or a SCRAM mechanism', {
    broker,
  });
}

/** Decodes the body of a frame from requestFrame() (call before release()). */
export function decodeResponseBody<Res>(api: ApiDefinition<any, Res>, lease: ResponseFrameLease): Res {
  if (lease.apiKey !== api.apiKey) throw new TypeError(`this frame answers api key ${lease.apiKey}, not ${api.name}`);
  const r = new Reader(lease.frame, lease.bodyOffset, lease.frame.length);
  try {
    const body = api.decodeResponse(r, lease.version);
    r.expectEnd();
    return body;
  } catch (err) {
    throw toProtocolError(err).inApi(api.apiKey, `${api.name}Response`, lease.version);
  }
}
