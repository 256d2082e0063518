/**
 * The receive side of a connection: socket bytes -> frames (the socket reader, i.e. the protocol's
 * FrameSplitter on `onread`) -> the request each answers -> a decoded body or a frame lease. The
 * one owner of the read path's memory: which frame came from the frame pool, and a frame given up
 * half received.
 *
 * Bounds, checked on every size prefix before memory is taken for it (admit): the peer's very
 * first bytes are looked at for TLS, HTTP and SSH (a wrong port or a missing `ssl`), then the size
 * against what the request at the head of the FIFO (the one this frame answers) admits.
 *
 * Memory (the ownership rule of the bytes is written next to FrameSplitter): request() decodes,
 * and the decoded body may keep Buffer views (bytes fields, unknown tagged fields), so it is
 * decoded from memory that stays valid: a small frame is copied out of the read buffer (exact
 * size), a large one is already its own buffer. requestFrame() hands out the frame itself, owned by
 * the caller until release(): a large frame's memory comes from the frame pool (the head of the
 * FIFO says, when the size prefix arrives, whether its answer is a lease) and goes back on release().
 */
import { isKafkaProtocolError, KafkaProtocolError, readResponseHeader, Reader, responseHeaderVersion, toProtocolError, type ApiDefinition } from '@kwire/protocol';
import { ConnectionError, isKafkaError } from '../errors.js';
import type { ResolvedConnectionConfig } from './options.js';
import { FETCH_RESPONSE_MARGIN_BYTES, SETUP_APIS, type Pending, type RequestQueue } from './request-queue.js';
import { describeBytes, foreignProtocol } from './sniff.js';
import { FrameReader } from './socket-reader.js';

/**
 * APIs whose responses start with ThrottleTimeMs in every version kwire implements, so that a raw
 * frame's throttle time can be read without decoding it (the others: ApiVersions has it after
 * ApiKeys, Produce at the end, the SASL APIs not at all).
 */
const THROTTLE_FIRST = new Set([1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 19, 20, 37, 68]);

/** Frames below this are copied into a plain allocation for requestFrame(); above, into the pool. */
const SMALL_COPY_BYTES = 4096;

const EMPTY = Buffer.alloc(0);

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

/** What the receive side needs from the connection that owns it. */
export interface ReceiverHost {
  readonly broker: string;
  /** The connection is closed (frames still arriving are dropped). */
  isClosed(): boolean;
  /** Ends the connection; `culprit` (the request the bad bytes answer) gets `err` itself. */
  fail(err: Error, culprit: Pending | undefined): void;
  /** `p` was answered (and resolved); `throttleTimeMs` as the answer reported it. */
  answered(p: Pending, throttleTimeMs: number): void;
}

export class ResponseReceiver {
  private readonly host: ReceiverHost;
  private readonly config: ResolvedConnectionConfig;
  private readonly queue: RequestQueue;
  private readonly reader: FrameReader;
  private readonly decodeReader = new Reader(EMPTY);
  /** The frame the reader is assembling came from the pool (its head request is a requestFrame). */
  private largeFromPool = false;
  private abandonedFrame: Buffer | undefined;
  private responses = 0;
  /** What net.connect / tls.connect take as `onread`: reads land in the reader's memory. */
  readonly onread: { buffer: () => Buffer; callback: (nread: number) => boolean };

  constructor(host: ReceiverHost, config: ResolvedConnectionConfig, queue: RequestQueue) {
    this.host = host;
    this.config = config;
    this.queue = queue;
    this.reader = new FrameReader(
      {
        allocate: (size) => this.allocate(size),
        frame: (frame, backing) => this.onFrame(frame, backing),
        admit: (size, streamOffset, bytes, start, end) => this.admit(size, streamOffset, bytes, start, end),
      },
      { readBufferBytes: config.readBufferBytes, maxFrameBytes: config.maxFrameBytes },
    );
    this.onread = { buffer: this.reader.onread.buffer, callback: (nread) => this.onRead(nread) };
  }

  /** Responses received so far. */
  get responsesReceived(): number {
    return this.responses;
  }

  /** The reader's figures: reads, direct reads, bytes, frames, large frames. */
  get readerStats(): FrameReader['stats'] {
    return this.reader.stats;
  }

  /** The connection is going away: a frame half received is given up (rule 3). */
  abandon(): void {
    const partial = this.reader.abandon();
    if (partial !== undefined && this.largeFromPool) this.abandonedFrame = partial;
  }

  /** The socket is closed, so no read can land in an abandoned frame any more: back to the pool. */
  releaseAbandoned(): void {
    if (this.abandonedFrame !== undefined) {
      this.config.framePool.release(this.abandonedFrame);
      this.abandonedFrame = undefined;
    }
  }

  private onRead(nread: number): boolean {
    try {
      return this.reader.onRead(nread);
    } catch (err) {
      // Nothing may escape a socket callback: it would be an uncaught exception. A framing error
      // (bad size prefix) belongs to the response being read, i.e. to the oldest request in flight.
      const e = isKafkaProtocolError(err) || isKafkaError(err) ? (err as Error) : toProtocolError(err);
      this.host.fail(e, this.queue.head);
      return false;
    }
  }

  /**
   * Every size prefix, before memory is taken for it: the peer's first bytes are checked for TLS,
   * HTTP and SSH (a wrong port or a missing `ssl`), then the size against what the request at the
   * head of the FIFO (the one this frame answers) admits.
   */
  private admit(size: number, streamOffset: number, bytes: Buffer, start: number, end: number): void {
    // Only the first frame's bytes are looked at (a view made once per connection, not per frame).
    const head = streamOffset === 0 ? bytes.subarray(start, Math.min(end, start + 16)) : EMPTY;
    if (streamOffset === 0) {
      const foreign = foreignProtocol(head, this.config.ssl !== undefined);
      if (foreign !== undefined) throw new ConnectionError(this.host.broker, `the server ${foreign} (first bytes: ${describeBytes(head)})`);
    }
    const p = this.queue.head;
    if (p === undefined) {
      throw new KafkaProtocolError(`a response frame of ${size} bytes arrived with no request in flight`, { reason: 'invalid-value', offset: streamOffset });
    }
    if (size <= p.maxResponseBytes) return;
    // Past the absolute maxFrameBytes mid-stream: the splitter's own KafkaProtocolError says it.
    if (streamOffset > 0 && size > this.config.maxFrameBytes) return;
    if (streamOffset === 0) {
      throw new ConnectionError(
        this.host.broker,
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
      this.host.broker,
      `the response to ${p.api.name} v${p.version} (correlation id ${p.correlationId}) announces ${size} bytes, more than the ${p.maxResponseBytes} this request admits (${why}); the connection is closed`,
    );
  }

  private allocate(size: number): Buffer {
    // Responses come in request order, so the head of the FIFO is the frame's future owner: a
    // requestFrame() caller gets pool memory (returned by release()), a decoded request a plain
    // allocation that its decoded body may keep views into.
    const head = this.queue.head;
    this.largeFromPool = head !== undefined && head.raw;
    return this.largeFromPool ? this.config.framePool.acquire(size) : Buffer.allocUnsafe(size);
  }

  private onFrame(frame: Buffer, backing: Buffer | undefined): void {
    const pooled = backing !== undefined && this.largeFromPool;
    const p = this.queue.take();
    const closed = this.host.isClosed();
    if (p === undefined || closed) {
      if (pooled) this.config.framePool.release(backing!);
      if (closed) return;
      throw new KafkaProtocolError(`a response frame of ${frame.length - 4} bytes arrived with no request in flight`, { reason: 'invalid-value' });
    }
    this.responses++;
    let throttleTimeMs = 0;
    try {
      if (frame.length < 8) {
        throw new KafkaProtocolError(`a response frame of ${frame.length - 4} bytes has no correlation id`, { reason: 'truncated', offset: 0 });
      }
      const correlationId = frame.readInt32BE(4);
      if (correlationId !== p.correlationId) {
        throw new ConnectionError(
          this.host.broker,
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
      this.host.fail(e, p);
      throw e;
    }
    this.host.answered(p, throttleTimeMs);
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
