// `kwire record`: a TCP proxy between Kafka clients and a cluster that records every frame.
//
// Rules, in order of importance:
//  1. Bytes are never lost, reordered or delayed for parsing. Client bytes go to the broker the
//     moment they arrive, untouched. Broker bytes go to the client the moment they arrive, except
//     Metadata and FindCoordinator responses, which are held until whole to have their broker
//     addresses replaced by the proxy's listeners (and the bytes behind them wait their turn).
//  2. Recording reads a copy: each chunk is appended to the connection's stream file as it is, and
//     a tracker (the protocol's FrameSplitter, keeping only each frame's head) follows frame
//     boundaries to index exchanges. If tracking ever fails (bytes that
//     are not Kafka frames, a response that matches no request, SASL v0 raw tokens), the
//     connection becomes a blind pipe: still forwarded and recorded, no longer indexed.
//  3. Responses are matched to requests by correlation id. Kafka answers in order per connection,
//     so the oldest request still waiting is the one (Produce with acks=0 gets no answer, and is
//     not waited for).
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { API_KEY_NAMES, ApiKey, FrameSplitter } from '@kwire/protocol';
import { CaptureWriter, type AppendFile } from '../capture/writer.js';
import { ConnectionRedactor } from './redact.js';
import { parseRequestHead, type RequestHead } from './request-head.js';
import { carriesAddresses, rewriteAddresses, type Address } from './rewrite.js';

export interface RecordingProxyOptions {
  /** Where the first listener listens (port 0: any free port). */
  listen: Address;
  /** The broker (bootstrap server) the first listener forwards to. */
  target: Address;
  /** The capture folder; created, and must not hold a capture already. */
  out: string;
  /** Host written into rewritten addresses: the listen host, or 127.0.0.1 when that is a wildcard. */
  advertisedHost?: string;
  /** Written into capture.json. */
  recorder?: string;
  /** Progress lines (listeners opened, connections, problems). */
  log?: (line: string) => void;
  /** Largest frame the tracker accepts before a connection turns blind (default 1 GiB). */
  maxFrameBytes?: number;
  /**
   * Write SASL secrets (PLAIN passwords, SCRAM proofs and signatures, OAUTHBEARER tokens) to the
   * capture as they crossed the wire. Default false: they are replaced in place (redact.ts).
   */
  keepSecrets?: boolean;
}

export interface ProxyStats {
  connections: number;
  exchanges: number;
  clientBytes: number;
  brokerBytes: number;
  blind: number;
}

const EMPTY = Buffer.alloc(0);

const addr = (a: Address) => `${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;

/** Bytes of each request kept for parsing: enough for any header, ApiVersions body and Produce acks. */
const REQUEST_HEAD_BYTES = 64 * 1024;
/** Api keys and versions at or above this are taken for bytes that are not Kafka (Kafka 4.4 defines keys up to 94). */
const MAX_PLAUSIBLE = 1000;
/** Bytes of each response kept when it passes through: size, correlation id, and an error code. */
const RESPONSE_HEAD_BYTES = 16;

interface Listener {
  server: Server;
  broker: Address;
  /** What clients are told (the rewritten address). */
  advertised: Address;
}

export class RecordingProxy {
  readonly writer: CaptureWriter;
  readonly stats: ProxyStats = { connections: 0, exchanges: 0, clientBytes: 0, brokerBytes: 0, blind: 0 };
  private readonly options: RecordingProxyOptions;
  private readonly listeners = new Map<string, Promise<Listener>>();
  private readonly connections = new Set<ProxyConnection>();
  private nextConn = 1;
  private stopping: Promise<void> | undefined;
  private main!: Listener;

  private constructor(options: RecordingProxyOptions, writer: CaptureWriter) {
    this.options = options;
    this.writer = writer;
  }

  /** Opens the first listener and the capture folder. */
  static async start(options: RecordingProxyOptions): Promise<RecordingProxy> {
    const writer = new CaptureWriter(options.out, { recorder: options.recorder ?? 'kwire record', target: addr(options.target), listen: addr(options.listen) });
    const proxy = new RecordingProxy(options, writer);
    try {
      const main = proxy.openListener(options.target, options.listen);
      proxy.listeners.set(addr(options.target), main);
      proxy.main = await main;
    } catch (err) {
      await writer.close();
      throw err;
    }
    return proxy;
  }

  /** The first listener's address, host:port: the bootstrap address for clients. */
  get address(): string {
    return addr(this.main.advertised);
  }

  get bootstrap(): string {
    return this.address;
  }

  /** Every listener: broker address -> proxy address. */
  async listenerMap(): Promise<{ broker: string; listen: string }[]> {
    const all = await Promise.all(this.listeners.values());
    return all.map((l) => ({ broker: addr(l.broker), listen: addr(l.advertised) }));
  }

  /** The proxy listener for a broker, opened on first use (one per broker address). */
  listenerFor(broker: Address): Promise<Address> {
    const key = addr(broker);
    let l = this.listeners.get(key);
    if (!l) {
      // Stopping: no new listeners (they would outlive stop()); the answer goes out unrewritten.
      if (this.stopping) return Promise.reject(new Error('the recorder is stopping'));
      l = this.openListener(broker, { host: this.options.listen.host, port: 0 });
      this.listeners.set(key, l);
    }
    return l.then((x) => x.advertised);
  }

  private openListener(broker: Address, listen: Address): Promise<Listener> {
    return new Promise((resolve, reject) => {
      const server = createServer({ noDelay: true }, (socket) => this.accept(socket, listener));
      const listener: Listener = { server, broker, advertised: listen };
      server.once('error', reject);
      server.listen(listen.port, listen.host, () => {
        server.off('error', reject);
        server.on('error', (err) => this.options.log?.(`listener for ${addr(broker)}: ${err.message}`));
        const port = (server.address() as AddressInfo).port;
        const wildcard = listen.host === '0.0.0.0' || listen.host === '::' || listen.host === '';
        listener.advertised = { host: this.options.advertisedHost ?? (wildcard ? '127.0.0.1' : listen.host), port };
        this.writer.line({ type: 'listener', at: this.writer.now(), listen: addr(listener.advertised), broker: addr(broker) });
        this.options.log?.(`listening on ${addr(listener.advertised)} for broker ${addr(broker)}`);
        resolve(listener);
      });
    });
  }

  private accept(client: Socket, listener: Listener): void {
    if (this.stopping) {
      client.destroy();
      return;
    }
    const conn = new ProxyConnection(this, this.nextConn++, client, listener.broker, addr(listener.advertised), this.options.maxFrameBytes ?? 1024 * 1024 * 1024);
    this.connections.add(conn);
    this.stats.connections++;
    conn.done.then(() => this.connections.delete(conn));
  }

  /** @internal */
  get keepSecrets(): boolean {
    return this.options.keepSecrets === true;
  }

  /** @internal */
  log(line: string): void {
    this.options.log?.(line);
  }

  /**
   * Stops listening, closes the connections still open (their unanswered requests are recorded as
   * such) and flushes every file. Safe to call twice.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const listeners = await Promise.allSettled(this.listeners.values());
      // server.close() calls back once its connections are gone: close them after asking.
      const closed = listeners.map((l) => (l.status === 'fulfilled' ? new Promise<void>((resolve) => l.value.server.close(() => resolve())) : Promise.resolve()));
      for (const c of this.connections) c.shutdown();
      await Promise.all([...this.connections].map((c) => c.done));
      await Promise.all(closed);
      await this.writer.close();
    })();
    return this.stopping;
  }
}

interface Pending {
  head: RequestHead;
  offset: number;
  length: number;
  at: number;
  end: number;
}

/** What a FrameTrack reports: a frame's start (its size prefix read), and the frame done. */
interface TrackHandlers {
  start?(streamOffset: number): void;
  /** `head`: the frame's first bytes (up to the track's head size), valid during the call. */
  frame(head: Buffer, offset: number, length: number, at: number): void;
}

/**
 * Follows frame boundaries in one direction of a connection: the protocol's FrameSplitter, told to
 * keep only each frame's head (the rest of a frame is counted, never copied: a 1 GiB Fetch answer
 * passes through in constant memory), plus the stream positions and times the capture index needs.
 */
class FrameTrack {
  /** Bytes seen so far in this direction (= the stream file's length). */
  position = 0;
  blind = false;
  /** A frame whose size prefix was read and that is not complete yet: where it starts, when it began. */
  open = false;
  frameStart = 0;
  frameAt = 0;
  /** The open frame's length. */
  frameLength = 0;
  /** Where the last complete frame ended: the start of whatever follows. */
  lastEnd = 0;
  /** Stream offset and time of the chunk being pushed. */
  chunkStart = 0;
  private chunkAt = 0;
  /** When the first bytes of a size prefix still incomplete arrived. */
  private prefixAt: number | undefined;
  private head = Buffer.allocUnsafe(16);
  private readonly splitter: FrameSplitter;
  private readonly now: () => number;

  constructor(headBytes: number, maxFrameBytes: number, now: () => number, handlers: TrackHandlers) {
    this.now = now;
    this.splitter = new FrameSplitter({
      maxFrameBytes,
      sink: {
        admit: (size, streamOffset) => {
          if (this.blind) throw new Error('the stream is no longer tracked');
          // Checked here first, so that the message says what the proxy concludes.
          if (size < 0 || size > maxFrameBytes) throw new Error(`a frame size of ${size} at byte ${streamOffset}: these bytes are not Kafka frames`);
          this.open = true;
          this.frameStart = streamOffset;
          this.frameLength = size + 4;
          this.frameAt = streamOffset < this.chunkStart && this.prefixAt !== undefined ? this.prefixAt : this.chunkAt;
          this.prefixAt = undefined;
          handlers.start?.(streamOffset);
          return headBytes;
        },
        // One head buffer per direction, reused: each head is parsed during the frame() call.
        allocate: (size) => (this.head.length >= size ? this.head : (this.head = Buffer.allocUnsafe(size))),
        frame: (head) => {
          this.open = false;
          this.lastEnd = this.frameStart + this.frameLength;
          if (!this.blind) handlers.frame(head, this.frameStart, this.frameLength, this.frameAt);
        },
      },
    });
  }

  /** Bytes of a size prefix received and not complete yet (0 while inside a frame). */
  get partialPrefix(): number {
    return this.open ? 0 : this.position - this.lastEnd;
  }

  /** Tracks one chunk; throws (and the caller turns the stream blind) when the bytes are not Kafka frames. */
  push(chunk: Buffer): void {
    this.chunkStart = this.position;
    this.chunkAt = this.now();
    try {
      this.splitter.push(chunk);
    } finally {
      this.position += chunk.length;
    }
    if (!this.open && this.position > this.lastEnd) this.prefixAt ??= this.chunkAt;
  }
}

type OutItem = Buffer | Promise<Buffer> | 'end';

class ProxyConnection {
  readonly done: Promise<void>;
  private readonly proxy: RecordingProxy;
  private readonly id: number;
  private readonly client: Socket;
  private readonly broker: Socket;
  private readonly clientFile: AppendFile;
  private readonly brokerFile: AppendFile;
  /** What receives each direction's bytes for the capture: the file, or the redactor in front of it. */
  private readonly clientRecord: Pick<AppendFile, 'write'>;
  private readonly brokerRecord: Pick<AppendFile, 'write'>;
  private readonly redactor: ConnectionRedactor | undefined;
  private rewrittenFile: AppendFile | undefined;
  private readonly req: FrameTrack;
  private readonly res: FrameTrack;
  private readonly pending: Pending[] = [];
  private software: { name: string; version: string } | undefined;
  /** The parts of a response frame being held for rewriting (copies: the rewrite is asynchronous). */
  private held: Buffer[] | undefined;
  /** The broker chunk being tracked, where its bytes not yet sent start, and where a held frame's part in it starts. */
  private chunk: Buffer = EMPTY;
  private forwardFrom = 0;
  private holdFrom = 0;
  /** Ordered output to the client; the fast path writes directly while it is empty. */
  private readonly out: OutItem[] = [];
  private pumping = false;
  private closedBy: 'client' | 'broker' | 'proxy' | undefined;
  private error: string | undefined;
  private finished = false;
  private resolveDone!: () => void;
  private clientClosed = false;
  private brokerClosed = false;
  /** Pause counts: a source stays paused while any of its sinks is full. */
  private clientHolds = 0;
  private brokerHolds = 0;

  constructor(proxy: RecordingProxy, id: number, client: Socket, broker: Address, listener: string, maxFrameBytes: number) {
    this.proxy = proxy;
    this.id = id;
    this.client = client;
    const now = () => this.proxy.writer.now();
    this.req = new FrameTrack(REQUEST_HEAD_BYTES, maxFrameBytes, now, {
      frame: (head, offset, length, at) => this.onRequest(head, offset, length, at, now()),
    });
    this.res = new FrameTrack(RESPONSE_HEAD_BYTES, maxFrameBytes, now, {
      start: (offset) => this.onResponseStart(offset),
      frame: (head, offset, length, at) => this.onResponseFrame(head, offset, length, at, now()),
    });
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    const w = proxy.writer;
    this.clientFile = w.stream(id, 'client');
    this.brokerFile = w.stream(id, 'broker');
    this.redactor = proxy.keepSecrets ? undefined : new ConnectionRedactor(this.clientFile, this.brokerFile);
    this.clientRecord = this.redactor?.client ?? this.clientFile;
    this.brokerRecord = this.redactor?.broker ?? this.brokerFile;
    w.line({ type: 'connection', conn: id, at: w.now(), client: `${client.remoteAddress}:${client.remotePort}`, listener, broker: addr(broker) });
    client.setNoDelay(true);
    this.broker = connect({ host: broker.host, port: broker.port, noDelay: true });
    // Client bytes may arrive before the broker connection is up: net.Socket buffers writes until then.
    client.on('data', (chunk: Buffer) => this.fromClient(chunk));
    this.broker.on('data', (chunk: Buffer) => this.fromBroker(chunk));
    client.on('end', () => {
      this.closedBy ??= 'client';
      this.broker.end();
    });
    this.broker.on('end', () => {
      this.closedBy ??= 'broker';
      this.send('end');
    });
    client.on('error', (err) => this.fail(`client: ${err.message}`));
    this.broker.on('error', (err) => this.fail(`broker ${addr(broker)}: ${err.message}`));
    client.on('close', () => {
      this.clientClosed = true;
      this.broker.destroy();
      void this.finish();
    });
    this.broker.on('close', () => {
      this.brokerClosed = true;
      // Whatever is queued for the client still goes out; the pump ends the client after it.
      this.send('end');
      void this.finish();
    });
  }

  /** Proxy stop: close both sides now. */
  shutdown(): void {
    this.closedBy ??= 'proxy';
    this.client.destroy();
    this.broker.destroy();
  }

  private fail(message: string): void {
    this.error ??= message;
    this.client.destroy();
    this.broker.destroy();
  }

  /* ---------------------------------------------------------------------------------------------
   * Client -> broker: forward first, then record and track a copy.
   * ------------------------------------------------------------------------------------------- */

  private fromClient(chunk: Buffer): void {
    if (!this.broker.write(chunk)) this.hold('client', (fn) => this.broker.once('drain', fn));
    if (!this.clientRecord.write(chunk)) this.hold('client', (fn) => this.clientFile.onDrain(fn));
    this.proxy.stats.clientBytes += chunk.length;
    const t = this.req;
    if (t.blind) {
      t.position += chunk.length;
      return;
    }
    try {
      t.push(chunk);
    } catch (err) {
      this.goBlind('client', (err as Error).message);
    }
  }

  private onRequest(head: Buffer, offset: number, length: number, at: number, end: number): void {
    if (head.length < 12) throw new Error(`a ${length}-byte frame is too short for a request header`);
    const h = parseRequestHead(head);
    // Keys and versions Kafka does not define (yet) pass through and are indexed like any other;
    // values no Kafka header could hold mean the bytes are something else.
    if (h.apiKey >= MAX_PLAUSIBLE || h.apiVersion >= MAX_PLAUSIBLE) {
      throw new Error(`api key ${h.apiKey} version ${h.apiVersion}: these bytes are not Kafka requests`);
    }
    if (h.software) this.software = h.software;
    const p: Pending = { head: h, offset, length, at, end };
    if (h.apiKey === ApiKey.Produce && h.acks === 0) {
      this.writeExchange(p, null, 'acks=0');
      return;
    }
    this.pending.push(p);
  }

  /* ---------------------------------------------------------------------------------------------
   * Broker -> client: record, then forward ranges of passing frames as they are and hold the
   * frames to rewrite.
   * ------------------------------------------------------------------------------------------- */

  private fromBroker(chunk: Buffer): void {
    if (!this.brokerRecord.write(chunk)) this.hold('broker', (fn) => this.brokerFile.onDrain(fn));
    this.proxy.stats.brokerBytes += chunk.length;
    const t = this.res;
    if (t.blind) {
      t.position += chunk.length;
      this.send(chunk);
      return;
    }
    const n = chunk.length;
    this.chunk = chunk;
    this.forwardFrom = 0;
    this.holdFrom = 0;
    try {
      t.push(chunk);
      if (this.held) this.held.push(Buffer.from(chunk.subarray(this.holdFrom, n)));
      else {
        // A size prefix cut by the chunk's end, of a response that will be held: hold its bytes now.
        const k = Math.min(t.partialPrefix, n - this.forwardFrom);
        const next = this.pending[0];
        if (k > 0 && next && carriesAddresses(next.head.apiKey)) {
          if (n - k > this.forwardFrom) this.send(chunk.subarray(this.forwardFrom, n - k));
          this.held = [Buffer.from(chunk.subarray(n - k, n))];
        } else if (n > this.forwardFrom) this.send(this.forwardFrom === 0 ? chunk : chunk.subarray(this.forwardFrom));
      }
    } catch (err) {
      // Whatever was held goes out as it came; from here on every byte passes untouched.
      let from = this.forwardFrom;
      if (this.held) {
        for (const part of this.held) this.send(part);
        this.held = undefined;
        from = this.holdFrom;
      }
      this.goBlind('broker', (err as Error).message);
      if (n > from) this.send(from === 0 ? chunk : chunk.subarray(from));
    }
    this.chunk = EMPTY;
  }

  /** A response's size prefix was read: a frame to rewrite is held from its first byte on. */
  private onResponseStart(offset: number): void {
    const next = this.pending[0];
    const hold = next !== undefined && carriesAddresses(next.head.apiKey);
    const at = offset - this.res.chunkStart;
    if (hold) {
      // at < 0: the prefix began in an earlier chunk, whose tail was held already.
      if (at >= 0) {
        if (at > this.forwardFrom) this.send(this.chunk.subarray(this.forwardFrom, at));
        this.forwardFrom = this.holdFrom = at;
        this.held ??= [];
      }
    } else if (this.held) {
      // Held for a prefix that turned out to start a frame that passes: let it go as it came.
      for (const part of this.held) this.send(part);
      this.held = undefined;
    }
  }

  private onResponseFrame(head: Buffer, offset: number, length: number, at: number, end: number): void {
    if (!this.held) {
      this.onResponse(head, offset, length, at, end);
      return;
    }
    const upTo = offset + length - this.res.chunkStart;
    this.held.push(Buffer.from(this.chunk.subarray(this.holdFrom, upTo)));
    this.holdFrom = upTo;
    // If this throws, fromBroker sends the held parts as they came.
    this.onHeldResponse(Buffer.concat(this.held), offset, at, end);
    this.held = undefined;
    this.forwardFrom = upTo;
  }

  /** The oldest waiting request, checked against the response's correlation id. */
  private match(correlationId: number): Pending {
    const p = this.pending[0];
    if (!p) throw new Error(`a response (correlation id ${correlationId}) with no request waiting`);
    if (p.head.correlationId !== correlationId) {
      // Left waiting: it is recorded as unanswered when the connection closes.
      throw new Error(`a response with correlation id ${correlationId} where ${p.head.correlationId} (${API_KEY_NAMES.get(p.head.apiKey) ?? `api ${p.head.apiKey}`} v${p.head.apiVersion}) was next`);
    }
    return this.pending.shift()!;
  }

  private onResponse(head: Buffer, offset: number, length: number, at: number, end: number): void {
    if (head.length < 8) throw new Error(`a ${length}-byte response frame has no correlation id`);
    const p = this.match(head.readInt32BE(4));
    this.writeExchange(p, { offset, length, at, end });
    // SaslHandshake v0: on success, raw SASL tokens without Kafka headers follow in both directions.
    if (p.head.apiKey === ApiKey.SaslHandshake && p.head.apiVersion === 0 && head.length >= 10 && head.readInt16BE(8) === 0) {
      this.redactor?.rawSasl();
      this.goBlind('client', 'SaslHandshake v0: raw SASL tokens follow');
      this.goBlind('broker', 'SaslHandshake v0: raw SASL tokens follow');
    }
  }

  private onHeldResponse(frame: Buffer, offset: number, at: number, end: number): void {
    const p = this.match(frame.length >= 8 ? frame.readInt32BE(4) : -1);
    const ref = { offset, length: frame.length, at, end };
    const h = p.head;
    // The client gets the rewritten frame, or the original if it cannot be rewritten. Bytes
    // behind it wait in the output queue meanwhile.
    const result = rewriteAddresses(h.apiKey, h.apiVersion, frame, (b) => this.proxy.listenerFor(b)).then(
      (rw) => {
        if (!rw) {
          this.writeExchange(p, ref);
          return frame;
        }
        this.rewrittenFile ??= this.proxy.writer.stream(this.id, 'rewritten');
        const rewrittenAt = this.rewrittenFile.bytes;
        this.rewrittenFile.write(rw.frame);
        this.writeExchange(p, ref, undefined, { offset: rewrittenAt, length: rw.frame.length, addresses: rw.addresses, method: rw.method });
        return rw.frame;
      },
      (err: Error) => {
        this.writeExchange(p, ref, undefined, undefined, `not rewritten (${err.message}): the client got the broker's addresses`);
        this.proxy.log(`conn ${this.id}: ${API_KEY_NAMES.get(h.apiKey)} v${h.apiVersion} not rewritten: ${err.message}`);
        return frame;
      },
    );
    this.send(result);
  }

  /* ---------------------------------------------------------------------------------------------
   * Framing, output, bookkeeping
   * ------------------------------------------------------------------------------------------- */

  private goBlind(stream: 'client' | 'broker', reason: string): void {
    const t = stream === 'client' ? this.req : this.res;
    if (t.blind) return;
    t.blind = true;
    this.proxy.stats.blind++;
    this.proxy.writer.line({ type: 'blind', conn: this.id, at: this.proxy.writer.now(), stream, offset: t.open ? t.frameStart : t.lastEnd, reason });
    if (stream === 'broker' && this.held && this.chunk === EMPTY) {
      // Between broker chunks (the client stream gave up): a frame held for rewriting goes out as it came.
      for (const part of this.held) this.send(part);
      this.held = undefined;
    }
    this.proxy.log(`conn ${this.id}: no longer indexing the ${stream} stream: ${reason}`);
    // Responses cannot be matched once requests are not tracked.
    if (stream === 'client') this.goBlind('broker', 'the client stream is no longer tracked');
  }

  private writeExchange(
    p: Pending,
    response: { offset: number; length: number; at: number; end: number } | null,
    noResponse?: 'acks=0' | 'unanswered',
    rewritten?: { offset: number; length: number; addresses: { from: string; to: string }[]; method: 'codec' | 'splice' },
    note?: string,
  ): void {
    const h = p.head;
    this.proxy.stats.exchanges++;
    this.proxy.writer.line({
      type: 'exchange',
      conn: this.id,
      apiKey: h.apiKey,
      apiName: API_KEY_NAMES.get(h.apiKey) ?? null,
      apiVersion: h.apiVersion,
      correlationId: h.correlationId,
      clientId: h.clientId,
      ...(this.software ? { software: this.software } : {}),
      request: { offset: p.offset, length: p.length, at: p.at, end: p.end },
      response,
      ...(noResponse ? { noResponse } : {}),
      ...(rewritten ? { rewritten } : {}),
      ...(note ? { note } : {}),
    });
  }

  /** Pauses `source` until `onDrain` fires. */
  private hold(source: 'client' | 'broker', onDrain: (fn: () => void) => void): void {
    const socket = source === 'client' ? this.client : this.broker;
    if (source === 'client') {
      if (this.clientHolds++ === 0) socket.pause();
    } else if (this.brokerHolds++ === 0) {
      socket.pause();
    }
    onDrain(() => {
      if (source === 'client') {
        if (--this.clientHolds === 0) socket.resume();
      } else if (--this.brokerHolds === 0) {
        socket.resume();
      }
    });
  }

  /** Output to the client, in order. */
  private send(item: OutItem): void {
    if (!this.pumping && this.out.length === 0 && Buffer.isBuffer(item)) {
      this.write(item);
      return;
    }
    this.out.push(item);
    if (!this.pumping) void this.pump();
  }

  private write(buf: Buffer): void {
    if (this.client.destroyed) return;
    if (!this.client.write(buf)) this.hold('broker', (fn) => this.client.once('drain', fn));
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    while (this.out.length > 0) {
      const item = this.out.shift()!;
      if (item === 'end') {
        if (!this.client.destroyed && !this.client.writableEnded) {
          this.client.end();
          // A client that never closes its side must not keep the connection (and stop()) open.
          setTimeout(() => this.client.destroy(), 10_000).unref();
        }
        continue;
      }
      this.write(Buffer.isBuffer(item) ? item : await item);
    }
    this.pumping = false;
  }

  private async finish(): Promise<void> {
    if (this.finished || !(this.clientClosed && this.brokerClosed)) return;
    this.finished = true;
    // Held rewrites settle (they never reject) before the exchange lines are final.
    while (this.pumping || this.out.length > 0) await new Promise((r) => setImmediate(r));
    for (const p of this.pending.splice(0)) this.writeExchange(p, null, 'unanswered');
    this.redactor?.end();
    const w = this.proxy.writer;
    w.line({
      type: 'close',
      conn: this.id,
      at: w.now(),
      by: this.closedBy ?? 'proxy',
      clientBytes: this.clientFile.bytes,
      brokerBytes: this.brokerFile.bytes,
      ...(this.error ? { error: this.error } : {}),
    });
    await Promise.all([this.clientFile.close(), this.brokerFile.close(), this.rewrittenFile?.close()]);
    this.resolveDone();
  }
}
