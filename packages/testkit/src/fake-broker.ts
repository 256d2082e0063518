// A scriptable fake broker: a node:net server that splits the byte stream into request frames
// (FrameSplitter), decodes each with decodeRequestFrame, and answers with encodeResponseFrame, or
// with whatever bytes a test wants (garbage, a wrong correlation id, a frame cut into pieces,
// nothing at all). ApiVersions answers every API the codec models unless a test says otherwise.
// The one fake broker of kwire's tests: the consumer's connection, group and fetch tests, FakeCluster,
// the chaos proxy's test and the recording proxy's tests in @kwire/tools. No module-level side
// effects: uvu may load this file.
import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { API_DEFINITIONS, decodeRequestFrame, decodeRequestHeader, encodeResponseFrame, FrameSplitter, Writer, type RequestFrame } from '@kwire/protocol';

export interface FakeRequest extends RequestFrame {
  /** When the frame was complete at the broker (ms, performance.now()). */
  receivedAt: number;
  /** Index of the client connection it came on (0 = first accepted). */
  connection: number;
}

export type Reply =
  /** Encode `body` as the response to the request (its version unless `version`). */
  | { body: unknown; version?: number; correlationId?: number; delayMs?: number; pieces?: number[]; gapMs?: number }
  /** Write these bytes as they are. */
  | { raw: Buffer; delayMs?: number; pieces?: number[]; gapMs?: number }
  /** Never answer. */
  | { none: true }
  /** Close the client's socket. */
  | { close: true };

export type Handler = (req: FakeRequest, broker: FakeBroker) => Reply | Promise<Reply> | undefined;

export interface FakeBrokerOptions {
  handlers?: Partial<Record<number, Handler>>;
  /** The ranges the default ApiVersions handler advertises; every API kwire models by default. */
  apiVersions?: { apiKey: number; minVersion: number; maxVersion: number }[];
  /** Answer requests one at a time in arrival order (as Kafka does). Default true. */
  ordered?: boolean;
}

/** Every API kwire models, at kwire's own range: a broker that agrees with everything. */
export function allApiVersions(): { apiKey: number; minVersion: number; maxVersion: number }[] {
  return [...API_DEFINITIONS.values()].map((a) => ({ apiKey: a.apiKey, minVersion: a.minVersion, maxVersion: a.maxVersion }));
}

export class FakeBroker {
  readonly host = '127.0.0.1';
  port = 0;
  readonly requests: FakeRequest[] = [];
  /** Sockets accepted so far. */
  accepted = 0;
  readonly sockets = new Set<Socket>();
  handlers: Partial<Record<number, Handler>>;
  apiVersions: { apiKey: number; minVersion: number; maxVersion: number }[];
  private readonly server: Server;
  private readonly ordered: boolean;
  private readonly writer = new Writer(64 * 1024);

  private constructor(options: FakeBrokerOptions) {
    this.handlers = options.handlers ?? {};
    this.apiVersions = options.apiVersions ?? allApiVersions();
    this.ordered = options.ordered ?? true;
    this.server = createServer((socket) => this.onConnection(socket));
  }

  static async start(options: FakeBrokerOptions = {}): Promise<FakeBroker> {
    const b = new FakeBroker(options);
    await new Promise<void>((resolve) => b.server.listen(0, '127.0.0.1', resolve));
    b.port = (b.server.address() as { port: number }).port;
    return b;
  }

  get address(): { host: string; port: number } {
    return { host: this.host, port: this.port };
  }

  /** Requests of one api key, in arrival order. */
  of(apiKey: number): FakeRequest[] {
    return this.requests.filter((r) => r.apiKey === apiKey);
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onConnection(socket: Socket): void {
    const index = this.accepted++;
    this.sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => {});
    const splitter = new FrameSplitter();
    let chain = Promise.resolve();
    socket.on('data', (chunk: Buffer) => {
      try {
        splitter.push(chunk, (view) => {
          const frame = Buffer.from(view);
          let req: FakeRequest;
          try {
            req = { ...decodeRequestFrame(frame), receivedAt: performance.now(), connection: index };
          } catch {
            // A version we do not model (e.g. ApiVersions v9): keep the header, no body.
            req = { ...decodeRequestHeader(frame), body: undefined, receivedAt: performance.now(), connection: index };
          }
          this.requests.push(req);
          const work = () => this.answer(socket, req);
          if (this.ordered) chain = chain.then(work, work);
          else void work();
        });
      } catch {
        socket.destroy();
      }
    });
  }

  /** Handler failures (a test bug shows up here rather than as an unhandled rejection). */
  readonly errors: Error[] = [];

  private async answer(socket: Socket, req: FakeRequest): Promise<void> {
    try {
      await this.answerOrThrow(socket, req);
    } catch (err) {
      this.errors.push(err as Error);
      socket.destroy();
    }
  }

  private async answerOrThrow(socket: Socket, req: FakeRequest): Promise<void> {
    const handler = this.handlers[req.apiKey] ?? (req.apiKey === 18 ? defaultApiVersions : undefined);
    const reply = handler ? await handler(req, this) : undefined;
    if (reply === undefined) throw new Error(`fake broker: no handler for api key ${req.apiKey}`);
    if ('none' in reply) return;
    if ('close' in reply) {
      socket.destroy();
      return;
    }
    if (reply.delayMs) await sleep(reply.delayMs);
    const bytes = 'raw' in reply ? reply.raw : Buffer.from(encodeResponseFrame(req.apiKey, reply.version ?? req.apiVersion, reply.correlationId ?? req.correlationId, reply.body, this.writer));
    await writePieces(socket, bytes, reply.pieces, reply.gapMs ?? 2);
  }
}

/** Writes `bytes` cut at the given offsets, pausing between pieces so that they arrive as separate reads. */
export async function writePieces(socket: Socket, bytes: Buffer, cuts: number[] | undefined, gapMs: number): Promise<void> {
  if (!cuts || cuts.length === 0) {
    if (!socket.destroyed) socket.write(bytes);
    return;
  }
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut <= from) continue;
    if (socket.destroyed) return;
    await new Promise<void>((resolve) => socket.write(bytes.subarray(from, cut), () => resolve()));
    from = cut;
    if (from < bytes.length) await sleep(gapMs);
  }
}

const defaultApiVersions: Handler = (req, broker) => ({
  body: { errorCode: 0, apiKeys: broker.apiVersions, throttleTimeMs: 0 },
});

/** An ApiVersions handler for a broker that only knows ApiVersions up to `max` (as an old broker). */
export function apiVersionsUpTo(max: number): Handler {
  return (req, broker) => {
    if (req.apiVersion > max) {
      // What a real broker does: UNSUPPORTED_VERSION in the v0 format, listing its own range for
      // ApiVersions (encodeResponseFrame writes v0 for that error code).
      return { body: { errorCode: 35, apiKeys: broker.apiVersions.map((k) => (k.apiKey === 18 ? { ...k, maxVersion: max } : k)) } };
    }
    return { body: { errorCode: 0, apiKeys: broker.apiVersions.map((k) => (k.apiKey === 18 ? { ...k, maxVersion: max } : k)), throttleTimeMs: 0 } };
  };
}

/** A Metadata v12+ response body that carries `tag` as its cluster id: tells responses apart. */
export function metadataBody(tag: string, throttleTimeMs = 0): unknown {
  return { throttleTimeMs, brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }], clusterId: tag, controllerId: 1, topics: [] };
}

/**
 * A FakeBroker factory for a suite: every broker it starts is checked for handler errors (a test
 * bug shows up as a failure of its test) and stopped after each test.
 */
export function fakeBrokers(test: Test): (options?: FakeBrokerOptions) => Promise<FakeBroker> {
  const started: FakeBroker[] = [];
  test.after.each(async () => {
    for (const b of started.splice(0)) {
      assert.equal(b.errors, [], 'fake broker handler errors');
      await b.stop();
    }
  });
  return async (options = {}) => {
    const b = await FakeBroker.start(options);
    started.push(b);
    return b;
  };
}
