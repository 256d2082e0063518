// A minimal Kafka client for the protocol tests: one socket, our frame codec, requests answered in
// order. No retries, no metadata: the tests drive each exchange themselves.
import { connect, type Socket } from 'node:net';
import { decodeResponseFrame, encodeRequestFrame, FrameSplitter, peekCorrelationId, type ResponseFrame } from '../../src/index.js';

export interface Exchange {
  apiKey: number;
  apiVersion: number;
  request: Buffer;
  response: Buffer;
  decoded: ResponseFrame;
}

export class RawClient {
  private readonly socket: Socket;
  private readonly splitter = new FrameSplitter();
  private readonly waiting: { correlationId: number; resolve: (frame: Buffer) => void; reject: (err: Error) => void }[] = [];
  private correlationId = 0;
  /** Every exchange, for tests that check bytes. */
  readonly exchanges: Exchange[] = [];

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.splitter.push(chunk, (frame) => {
        const next = this.waiting.shift();
        if (!next) return;
        if (peekCorrelationId(frame) !== next.correlationId) next.reject(new Error(`correlation id ${peekCorrelationId(frame)}, expected ${next.correlationId}`));
        // Copy: the frame may be a view of a chunk that the test outlives.
        else next.resolve(Buffer.from(frame));
      });
    });
    const fail = (err: Error) => {
      for (const w of this.waiting.splice(0)) w.reject(err);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed')));
  }

  static async connect(bootstrap: string): Promise<RawClient> {
    const [host, port] = bootstrap.split(',')[0]!.split(':');
    const socket = connect({ host: host!, port: Number(port) });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', reject);
    });
    return new RawClient(socket);
  }

  /** Sends the raw bytes of a request frame and resolves with the raw response frame. */
  sendRaw(frame: Buffer, correlationId: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ correlationId, resolve, reject });
      this.socket.write(frame);
    });
  }

  async call<T = any>(apiKey: number, apiVersion: number, body: unknown, clientId = 'kwire-protocol-test'): Promise<T> {
    const correlationId = ++this.correlationId;
    // Copy: the shared writer's slab is never rewritten, but a test keeps these bytes.
    const request = Buffer.from(encodeRequestFrame({ apiKey, apiVersion, correlationId, clientId, body }));
    const response = await this.sendRaw(request, correlationId);
    const decoded = decodeResponseFrame(apiKey, apiVersion, response);
    this.exchanges.push({ apiKey, apiVersion, request, response, decoded });
    return decoded.body as T;
  }

  nextCorrelationId(): number {
    return ++this.correlationId;
  }

  close(): void {
    this.socket.end();
  }
}
