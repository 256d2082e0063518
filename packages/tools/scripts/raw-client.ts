// A minimal Kafka client for the fixture captures of kwire's own requests: one socket, the frame
// codec, answers in order. No retries, no metadata, no version negotiation: the capture script
// chooses every API and version itself, including ones no real peer sends.
import { connect, type Socket } from 'node:net';
import { decodeResponseFrame, encodeRequestFrame, FrameSplitter, peekCorrelationId } from '@kwire/protocol';

export class RawClient {
  private readonly socket: Socket;
  private readonly splitter = new FrameSplitter();
  private readonly waiting: { correlationId: number; resolve: (frame: Buffer) => void; reject: (err: Error) => void }[] = [];
  private correlationId = 0;
  private closed: Error | undefined;
  readonly clientId: string;

  private constructor(socket: Socket, clientId: string) {
    this.socket = socket;
    this.clientId = clientId;
    socket.on('data', (chunk: Buffer) => {
      this.splitter.push(chunk, (frame) => {
        const next = this.waiting.shift();
        if (!next) return;
        const id = peekCorrelationId(frame);
        if (id !== next.correlationId) next.reject(new Error(`correlation id ${id}, expected ${next.correlationId}`));
        // Copy: the frame may be a view of a socket chunk.
        else next.resolve(Buffer.from(frame));
      });
    });
    const fail = (err: Error) => {
      this.closed ??= err;
      for (const w of this.waiting.splice(0)) w.reject(err);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed')));
  }

  static async connect(address: string, clientId = 'kwire-capture'): Promise<RawClient> {
    const i = address.lastIndexOf(':');
    const socket = connect({ host: address.slice(0, i), port: Number(address.slice(i + 1)), noDelay: true });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', reject);
    });
    return new RawClient(socket, clientId);
  }

  nextCorrelationId(): number {
    return ++this.correlationId;
  }

  /** Sends a whole request frame; resolves with the whole response frame. */
  sendRaw(frame: Buffer, correlationId: number): Promise<Buffer> {
    if (this.closed) return Promise.reject(this.closed);
    return new Promise((resolve, reject) => {
      this.waiting.push({ correlationId, resolve, reject });
      this.socket.write(frame);
    });
  }

  /** Sends a frame no response comes to (Produce with acks=0). */
  sendOnly(frame: Buffer): void {
    this.socket.write(frame);
  }

  encode(apiKey: number, apiVersion: number, body: unknown): { frame: Buffer; correlationId: number } {
    const correlationId = this.nextCorrelationId();
    // Copied: the shared writer's slab is not ours to keep.
    return { frame: Buffer.from(encodeRequestFrame({ apiKey, apiVersion, correlationId, clientId: this.clientId, body })), correlationId };
  }

  // The bodies vary per API and version; callers read the fields they asked for.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async call<T = any>(apiKey: number, apiVersion: number, body: unknown): Promise<T> {
    const { frame, correlationId } = this.encode(apiKey, apiVersion, body);
    const response = await this.sendRaw(frame, correlationId);
    return decodeResponseFrame(apiKey, apiVersion, response).body as T;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed) return resolve();
      this.socket.once('close', () => resolve());
      this.socket.end();
    });
  }
}
