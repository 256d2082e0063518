/**
 * The request side of a connection: every request from submit to answer, and the holds that keep
 * ordinary requests back. The one owner of the correlation ids, the FIFO of requests in flight,
 * the requests held back, the broker's throttle and the per-request timeouts; the connection, the
 * handshake and the receive side change them only through its methods.
 *
 * In flight: each request gets a correlation id and is written at once (several may be in flight:
 * the broker answers one connection's requests strictly in order), so the head of the FIFO is the
 * request the next response answers. Each has its own timeout (requestTimeoutMs, or a longer one
 * for long polls such as Fetch or JoinGroup), counted from submit, so time held back counts too; a
 * timeout in flight is the connection's end (a late answer could be matched to the wrong request).
 *
 * Held: new requests wait, in order, while the broker throttles us (KIP-219: after a response with
 * throttleTimeMs > 0, nothing is sent until that time has passed) and while the connection
 * re-authenticates (KIP-368; the handshake sets and lifts that hold). Setup traffic (ApiVersions,
 * SASL) bypasses both. A held request that times out fails alone: nothing was sent.
 */
import { writeRequestFrame, Writer, type ApiDefinition } from '@kwire/protocol';
import { RequestTimeoutError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ResolvedConnectionConfig } from './options.js';

/**
 * The most a response to ApiVersions, SaslHandshake or SaslAuthenticate may announce: real ones
 * are a few hundred bytes (ApiVersions of a 4.x broker: about 700), so anything near this is a
 * peer that is not a Kafka listener, refused before a byte of it is allocated.
 */
const SETUP_RESPONSE_BYTES = 1024 * 1024;
export const SETUP_APIS = new Set([17, 18, 36]);

/**
 * What a Fetch answer may carry beyond the maxBytes it asked for: the broker still returns the
 * first batch of the first non-empty partition when that batch alone is larger (KIP-74; bounded by
 * the topic's max.message.bytes, 1 MiB by default), plus the per-partition fields and aborted
 * transaction lists, which maxBytes does not count.
 */
export const FETCH_RESPONSE_MARGIN_BYTES = 16 * 1024 * 1024;

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

/** How one request is sent and answered (Connection.submit()). */
export interface SubmitOptions extends RequestOptions {
  /** Resolve with a ResponseFrameLease rather than a decoded body (requestFrame). */
  raw?: boolean;
  /** Setup traffic (ApiVersions, SASL): bypasses the holds that keep ordinary requests back. */
  internal?: boolean;
  /** Decodes the frame instead of the API's own decoder (ApiVersions' v0 fallback). */
  decode?: (frame: Buffer) => unknown;
}

/** One request from submit to answer. */
export interface Pending {
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

/** What the queue needs from the connection that owns it. */
export interface RequestQueueHost {
  /** "host:port", for messages. */
  readonly broker: string;
  readonly nodeId: number | undefined;
  /** Ordinary requests may go out: the connection is ready, or closing and draining. */
  sending(): boolean;
  /** Writes one request frame to the socket (the socket owns the bytes from then on). */
  write(bytes: Buffer): void;
  /** The version to send `api` in, when the caller named none. */
  version(api: ApiDefinition<any, any>): number;
  /** A request in flight got no answer in time: the connection must go, with `err` for `p`. */
  timedOut(p: Pending, err: Error): void;
  /** A held request timed out and left the queue (a closing connection may be done now). */
  dequeued(): void;
}

export class RequestQueue {
  private readonly host: RequestQueueHost;
  private readonly config: ResolvedConnectionConfig;
  private readonly logger: Logger;
  private readonly writer = new Writer(16 * 1024);
  private correlationId = 0;
  private readonly inflight: Pending[] = [];
  private readonly held: Pending[] = [];
  private throttledUntil = 0;
  private throttleTimer: NodeJS.Timeout | undefined;
  /** Ordinary requests wait while this is set (a re-authentication is due or running). */
  private authHold = false;
  private lastActivityAt = Date.now();
  readonly counters = { requestsSent: 0, throttleEvents: 0, throttledMs: 0 };

  constructor(host: RequestQueueHost, config: ResolvedConnectionConfig) {
    this.host = host;
    this.config = config;
    this.logger = config.logger;
  }

  /** Requests sent and not answered yet. */
  get inFlight(): number {
    return this.inflight.length;
  }

  /** Requests waiting to be sent (throttle or re-authentication). */
  get queued(): number {
    return this.held.length;
  }

  /** Nothing in flight, nothing held, no re-authentication holding requests back. */
  get drained(): boolean {
    return this.inflight.length + this.held.length === 0 && !this.authHold;
  }

  /** When the last request was sent or response taken (Date.now()). */
  get lastActivity(): number {
    return this.lastActivityAt;
  }

  /** The oldest request in flight: the one the next response answers (responses come in order). */
  get head(): Pending | undefined {
    return this.inflight[0];
  }

  /**
   * Encodes and sends `body` (or holds it back while the holds say so); resolves with what the
   * receive side hands the request's resolve(). Errors of the request itself (a bad timeout, a
   * version the broker lacks, a body that does not encode) reject without touching the stream.
   */
  submit(api: ApiDefinition<any, any>, body: unknown, options: SubmitOptions): Promise<unknown> {
    const { raw = false, internal = false, decode } = options;
    return new Promise((resolve, reject) => {
      let version: number;
      let bytes: Buffer;
      let timeoutMs: number;
      let maxResponseBytes: number;
      const correlationId = (this.correlationId = (this.correlationId + 1) & 0x7fffffff);
      try {
        timeoutMs = options.timeoutMs ?? this.config.requestTimeoutMs;
        if (!(Number.isSafeInteger(timeoutMs) && timeoutMs > 0)) throw new RangeError(`timeoutMs must be a positive integer, got ${timeoutMs}`);
        version = options.version ?? this.host.version(api);
        // Writer rule: finished bytes are never rewritten, so the socket may queue them as they are.
        bytes = writeRequestFrame(this.writer, api, version, correlationId, this.config.clientId, body);
        maxResponseBytes = this.responseLimit(api, body);
      } catch (err) {
        return reject(err);
      }
      // One reading of the clock decides both whether to send and how long a throttle holds.
      const now = Date.now();
      const p: Pending = { api, version, correlationId, bytes, raw, internal, decode, timeoutMs, deadline: now + timeoutMs, maxResponseBytes, timer: undefined, resolve, reject };
      if (internal || (this.held.length === 0 && this.canSend(now))) this.send(p);
      else {
        // Held back (throttled, re-authenticating): request.timeout.ms runs from now, not from
        // whenever the hold ends.
        p.timer = setTimeout(() => this.onHeldTimeout(p), timeoutMs);
        this.held.push(p);
        this.scheduleFlush(now);
      }
    });
  }

  /** Takes the head of the FIFO for the response that just arrived (its timeout stops). */
  take(): Pending | undefined {
    const p = this.inflight.shift();
    if (p !== undefined) {
      clearTimeout(p.timer);
      p.timer = undefined;
      this.lastActivityAt = Date.now();
    }
    return p;
  }

  /** KIP-219: the broker asked for `ms` of quiet after answering `api`. */
  throttle(ms: number, api: ApiDefinition<any, any>): void {
    // A throttle longer than request.timeout.ms would fail every request queued behind it anyway;
    // and a hostile or broken value (2^31-1 ms) must not stall the connection for weeks.
    if (ms > this.config.requestTimeoutMs) {
      this.logger.warn('broker throttle time capped at request.timeout.ms', {
        broker: this.host.broker,
        nodeId: this.host.nodeId,
        api: api.name,
        throttleTimeMs: ms,
        cappedMs: this.config.requestTimeoutMs,
      });
      ms = this.config.requestTimeoutMs;
    }
    const until = Date.now() + ms;
    if (until > this.throttledUntil) this.throttledUntil = until;
    this.counters.throttleEvents++;
    this.counters.throttledMs += ms;
    this.logger.debug('throttled by the broker', { broker: this.host.broker, nodeId: this.host.nodeId, api: api.name, throttleTimeMs: ms });
  }

  /** Holds ordinary requests back for a re-authentication (setup traffic still goes). */
  holdForAuth(): void {
    this.authHold = true;
  }

  /** Lifts the re-authentication hold; the caller flushes (or finishes a close). */
  releaseAuth(): void {
    this.authHold = false;
  }

  /** Sends what the holds kept back, in order, while they allow. */
  flush(): void {
    const now = Date.now();
    while (this.held.length > 0 && this.canSend(now)) this.send(this.held.shift()!);
    if (this.held.length > 0) this.scheduleFlush(now);
  }

  /**
   * Empties the queue for a connection that is going away: every request, in flight first, then
   * held, each with its timer stopped, for the connection to reject.
   */
  drain(): Pending[] {
    const all = this.inflight.splice(0).concat(this.held.splice(0));
    for (const p of all) {
      clearTimeout(p.timer);
      p.timer = undefined;
    }
    this.stopThrottleTimer();
    return all;
  }

  /** No flush after the throttle ends (the connection is closed). */
  stopThrottleTimer(): void {
    clearTimeout(this.throttleTimer);
    this.throttleTimer = undefined;
  }

  /**
   * How large an answer to this request may be (memory follows what we asked for, not what a peer
   * announces): a Fetch its own maxBytes plus the KIP-74 margin, the setup APIs a small fixed
   * bound, the rest maxResponseBytes; never above maxFrameBytes.
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

  private canSend(now: number): boolean {
    return this.host.sending() && !this.authHold && now >= this.throttledUntil;
  }

  private send(p: Pending): void {
    clearTimeout(p.timer);
    p.timer = setTimeout(() => this.onTimeout(p), Math.max(1, p.deadline - Date.now()));
    this.inflight.push(p);
    this.counters.requestsSent++;
    this.lastActivityAt = Date.now();
    this.host.write(p.bytes);
  }

  /**
   * `now`: the clock reading at which the caller found it could not send. With a second reading
   * here, a throttle ending between the two left the wait at 0, no timer, and the held requests
   * unsent until their timeouts.
   */
  private scheduleFlush(now: number): void {
    // Re-authentication flushes when it ends; only the throttle needs a timer.
    const wait = this.throttledUntil - now;
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
    p.reject(new RequestTimeoutError(`${p.api.name} v${p.version} to ${this.host.broker} waited ${p.timeoutMs} ms without being sent, ${why}`));
    this.host.dequeued();
  }

  private onTimeout(p: Pending): void {
    p.timer = undefined;
    const err = new RequestTimeoutError(
      `${p.api.name} v${p.version} to ${this.host.broker} (correlation id ${p.correlationId}) got no response within ${p.timeoutMs} ms; ` +
        'the connection is closed, as a late response could no longer be matched',
    );
    this.host.timedOut(p, err);
  }
}
