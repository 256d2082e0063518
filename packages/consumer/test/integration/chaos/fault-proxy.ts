// A small TCP proxy in front of the cluster for one chaos member, with faults it can inject on
// command. It listens once per broker; the broker addresses in Metadata and FindCoordinator
// answers are replaced by its own listeners (rewriteAddresses below), so every connection the member
// opens after bootstrap goes through it too. Faults:
//   rst        every open socket is reset (TCP RST), both sides;
//   blackhole  nothing is read or forwarded in either direction (new connections are accepted and
//              left silent) until it is lifted; then the held bytes flow again, as after a healed
//              network partition;
//   latency    every chunk, both ways, is forwarded `ms` late (order kept);
//   cut-fetch  the next Fetch answer is forwarded only in part, then both sockets are reset.
// Frames are split with the protocol's FrameSplitter; requests are matched to answers in order
// (Kafka answers in order per connection, and a consumer never sends acks=0 Produce).
import { createServer, connect, type Server, type Socket } from 'node:net';
import { ApiKey, decodeResponseFrame, encodeResponseFrame, FrameSplitter, readRequestHeaderStart, Reader, Writer } from '@kwire/protocol';

const HOST = '127.0.0.1';

interface Address {
  host: string;
  port: number;
}

/** What the proxy keeps of a request to read its answer. */
interface RequestHead {
  apiKey: number;
  apiVersion: number;
}

function parseRequestHead(frame: Buffer): RequestHead {
  const h = readRequestHeaderStart(new Reader(frame, 4));
  if (h.apiKey < 0 || h.apiVersion < 0) throw new Error(`api key ${h.apiKey} version ${h.apiVersion} is not a Kafka request header`);
  return { apiKey: h.apiKey, apiVersion: h.apiVersion };
}

/**
 * A Metadata or FindCoordinator answer with its broker addresses mapped to the proxy's listeners,
 * or null when it is another answer or nothing changed; throws when the frame does not decode.
 * The kwire consumer speaks only versions of the codec, so decode, map and encode is all it takes.
 * (The recording proxy of @kwire/tools, which faces any client, also splices the old versions; the
 * consumer's tests cannot import it, since @kwire/tools is built on this package.)
 */
async function rewriteAddresses(head: RequestHead, frame: Buffer, map: (broker: Address) => Promise<Address>): Promise<Buffer | null> {
  if (head.apiKey !== ApiKey.Metadata && head.apiKey !== ApiKey.FindCoordinator) return null;
  const decoded = decodeResponseFrame(head.apiKey, head.apiVersion, frame);
  const body = decoded.body as { brokers?: Address[]; coordinators?: Address[] } & Partial<Address>;
  // FindCoordinator v0-3 answers one coordinator in the body itself; v4+ a list.
  const entries = head.apiKey === ApiKey.Metadata ? body.brokers! : head.apiVersion < 4 ? [body as Address] : body.coordinators!;
  let changed = false;
  for (const e of entries) {
    if (e.host === '' || e.port <= 0) continue; // error answers carry host "" and port -1
    const to = await map({ host: e.host, port: e.port });
    if (to.host === e.host && to.port === e.port) continue;
    e.host = to.host;
    e.port = to.port;
    changed = true;
  }
  if (!changed) return null;
  // A writer of its own: the frame outlives the next encode on the shared one.
  return Buffer.from(encodeResponseFrame(head.apiKey, head.apiVersion, decoded.correlationId, decoded.body, new Writer(frame.length + 256), decoded.headerTaggedFields));
}

export type ProxyFault = 'rst' | 'blackhole' | 'latency' | 'cut-fetch';

interface Listener {
  server: Server;
  listen: Address;
  upstream: Address;
}

export class FaultProxy {
  private readonly listeners = new Map<string, Promise<Listener>>();
  private readonly connections = new Set<ProxyConnection>();
  blackholed = false;
  latencyMs = 0;
  cutArmed = false;
  /** Faults that took effect, for the summary. */
  readonly counts = { rst: 0, cut: 0 };
  private closed = false;

  private constructor(readonly name: string) {}

  /** A proxy with a listener for each of `brokers` (host:port list). */
  static async start(name: string, brokers: string): Promise<FaultProxy> {
    const p = new FaultProxy(name);
    for (const b of brokers.split(',')) {
      const [host, port] = b.split(':');
      await p.listenerFor({ host: host!, port: Number(port) });
    }
    return p;
  }

  /** The member's bootstrap.servers: the listeners in front of the brokers given at start. */
  async bootstrap(): Promise<string> {
    const ls = await Promise.all(this.listeners.values());
    return ls.map((l) => `${l.listen.host}:${l.listen.port}`).join(',');
  }

  listenerFor(upstream: Address): Promise<Address> {
    const key = `${upstream.host}:${upstream.port}`;
    let l = this.listeners.get(key);
    if (!l) {
      l = new Promise<Listener>((resolve, reject) => {
        const server = createServer((socket) => this.accept(socket, upstream));
        server.once('error', reject);
        server.listen(0, HOST, () => {
          const port = (server.address() as { port: number }).port;
          resolve({ server, listen: { host: HOST, port }, upstream });
        });
      });
      this.listeners.set(key, l);
    }
    return l.then((x) => x.listen);
  }

  private accept(client: Socket, upstream: Address): void {
    if (this.closed) {
      client.destroy();
      return;
    }
    const c = new ProxyConnection(this, client, upstream);
    this.connections.add(c);
    client.once('close', () => this.connections.delete(c));
  }

  /** Resets every open socket (both sides). */
  resetAll(): void {
    this.counts.rst++;
    for (const c of this.connections) c.reset();
  }

  setBlackhole(on: boolean): void {
    this.blackholed = on;
    for (const c of this.connections) c.holdChanged();
  }

  /** One cut, spent by the next Fetch answer. */
  armCut(): void {
    this.cutArmed = true;
  }

  takeCut(): boolean {
    if (!this.cutArmed) return false;
    this.cutArmed = false;
    this.counts.cut++;
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.connections) c.reset();
    for (const l of this.listeners.values()) {
      const { server } = await l;
      await new Promise<void>((r) => server.close(() => r()));
    }
  }
}

/** One client socket and its upstream, with a serial pipeline per direction. */
class ProxyConnection {
  private readonly upstream: Socket;
  private readonly requests = new FrameSplitter();
  private readonly responses = new FrameSplitter();
  private readonly pending: RequestHead[] = [];
  /** Frames in order per direction; each waits for the one before (rewrites are async). */
  private toServer: Promise<void> = Promise.resolve();
  private toClient: Promise<void> = Promise.resolve();
  private dead = false;

  constructor(
    private readonly proxy: FaultProxy,
    private readonly client: Socket,
    upstreamAddress: Address,
  ) {
    this.upstream = connect(upstreamAddress.port, upstreamAddress.host);
    for (const s of [client, this.upstream]) {
      s.setNoDelay(true);
      s.on('error', () => this.reset());
      s.on('close', () => this.reset());
    }
    this.holdChanged();
    client.on('data', (chunk: Buffer) => {
      try {
        this.requests.push(chunk, (frame) => {
          this.pending.push(parseRequestHead(frame));
          const due = Date.now() + this.proxy.latencyMs;
          this.toServer = this.toServer.then(() => this.forward(this.upstream, frame, due));
        });
      } catch {
        this.reset();
      }
    });
    this.upstream.on('data', (chunk: Buffer) => {
      try {
        this.responses.push(chunk, (frame) => {
          const head = this.pending.shift();
          const due = Date.now() + this.proxy.latencyMs;
          this.toClient = this.toClient.then(() => this.answer(head, frame, due));
        });
      } catch {
        this.reset();
      }
    });
  }

  /** A black hole reads nothing on either side (bytes wait in the kernel, as in a partition). */
  holdChanged(): void {
    if (this.dead) return;
    if (this.proxy.blackholed) {
      this.client.pause();
      this.upstream.pause();
    } else {
      this.client.resume();
      this.upstream.resume();
    }
  }

  private async answer(head: RequestHead | undefined, frame: Buffer, due: number): Promise<void> {
    if (this.dead) return;
    let out = frame;
    if (head) {
      const r = await rewriteAddresses(head, frame, (b) => this.proxy.listenerFor(b)).catch(() => null);
      if (r) out = r;
    }
    if (head?.apiKey === ApiKey.Fetch && out.length > 16 && this.proxy.takeCut()) {
      await this.forward(this.client, out.subarray(0, Math.floor(out.length / 2)), due);
      // Let the half frame reach the client before the reset.
      await new Promise((r) => setTimeout(r, 50));
      this.reset();
      return;
    }
    await this.forward(this.client, out, due);
  }

  /** Writes `bytes` at `due` at the earliest: the latency each frame met when it arrived. */
  private async forward(to: Socket, bytes: Buffer, due: number): Promise<void> {
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (this.dead) return;
    to.write(bytes);
  }

  reset(): void {
    if (this.dead) return;
    this.dead = true;
    for (const s of [this.client, this.upstream]) {
      if (s.destroyed) continue;
      // An RST, not a FIN: what a crashed peer or a middlebox dropping the flow looks like.
      if (s.readyState === 'open' || s.readyState === 'readOnly' || s.readyState === 'writeOnly') s.resetAndDestroy();
      else s.destroy();
    }
  }
}
