// A small TCP proxy in front of a cluster for one chaos member, with faults it can inject on
// command. It listens once per broker; the broker addresses in Metadata and FindCoordinator
// answers are replaced by its own listeners (with @kwire/tools' rewriteAddresses, the rewrite of
// `kwire record`), so every connection the member opens after bootstrap goes through it too. Faults:
//   rst        every open socket is reset (TCP RST), both sides;
//   blackhole  nothing is read or forwarded in either direction (new connections are accepted and
//              left silent) until it is lifted; then the held bytes flow again, as after a healed
//              network partition;
//   latency    every chunk, both ways, is forwarded `ms` late (order kept);
//   cut-fetch  the next Fetch answer is forwarded only in part, then both sockets are reset.
// Frames are split with the protocol's FrameSplitter; requests are matched to answers in order
// (Kafka answers in order per connection, and a consumer never sends acks=0 Produce).
import { createServer, connect, type Server, type Socket } from 'node:net';
import { ApiKey, FrameSplitter } from '@kwire/protocol';
import { carriesAddresses, parseAddress, parseRequestHead, rewriteAddresses, type Address, type RequestHead } from '@kwire/tools';

const HOST = '127.0.0.1';

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
    for (const b of brokers.split(',')) await p.listenerFor(parseAddress(b));
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
    if (head && carriesAddresses(head.apiKey)) {
      // A frame that does not decode goes through as it came (the member then fails as it would).
      const r = await rewriteAddresses(head.apiKey, head.apiVersion, frame, (b) => this.proxy.listenerFor(b)).catch(() => null);
      if (r) out = r.frame;
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
