// A small scriptable fake broker for the proxy tests: a node:net server that splits the byte
// stream into request frames, decodes each, and answers with what the handler for its API key
// returns (ApiVersions answers every API the codec models by default). A trimmed sibling of the
// consumer's connection-fake-broker.ts: the consumer's test helpers are not part of its package,
// and these tests need only this much. No module-level side effects: uvu may load this file.
import { createServer, type Server, type Socket } from 'node:net';
import { API_DEFINITIONS, decodeRequestFrame, encodeResponseFrame, FrameSplitter, Writer, type RequestFrame } from '@kwire/protocol';

/** The body of the response to `req`, encoded at the request's version. */
export type Handler = (req: RequestFrame) => { body: unknown };

export class FakeBroker {
  readonly host = '127.0.0.1';
  port = 0;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly writer = new Writer(64 * 1024);

  private constructor(private readonly handlers: Partial<Record<number, Handler>>) {
    this.server = createServer((socket) => this.onConnection(socket));
  }

  static async start(options: { handlers?: Partial<Record<number, Handler>> } = {}): Promise<FakeBroker> {
    const b = new FakeBroker(options.handlers ?? {});
    await new Promise<void>((resolve) => b.server.listen(0, '127.0.0.1', resolve));
    b.port = (b.server.address() as { port: number }).port;
    return b;
  }

  get address(): { host: string; port: number } {
    return { host: this.host, port: this.port };
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onConnection(socket: Socket): void {
    this.sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => {});
    const splitter = new FrameSplitter();
    socket.on('data', (chunk: Buffer) => {
      try {
        splitter.push(chunk, (view) => {
          const req = decodeRequestFrame(Buffer.from(view));
          const handler = this.handlers[req.apiKey] ?? (req.apiKey === 18 ? apiVersions : undefined);
          if (!handler) throw new Error(`fake broker: no handler for api key ${req.apiKey}`);
          const { body } = handler(req);
          socket.write(Buffer.from(encodeResponseFrame(req.apiKey, req.apiVersion, req.correlationId, body, this.writer)));
        });
      } catch {
        socket.destroy();
      }
    });
  }
}

/** Every API the codec models, at its own range: a broker that agrees with everything. */
const apiVersions: Handler = () => ({
  body: { errorCode: 0, apiKeys: [...API_DEFINITIONS.values()].map((a) => ({ apiKey: a.apiKey, minVersion: a.minVersion, maxVersion: a.maxVersion })), throttleTimeMs: 0 },
});

/** A Metadata v12+ response body that carries `tag` as its cluster id: tells responses apart. */
export function metadataBody(tag: string, throttleTimeMs = 0): unknown {
  return { throttleTimeMs, brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }], clusterId: tag, controllerId: 1, topics: [] };
}
