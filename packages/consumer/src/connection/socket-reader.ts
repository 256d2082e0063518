/**
 * The connection's socket reader: @kwire/protocol's FrameSplitter in its read mode, wired to
 * Node's `onread` option (net.Socket and tls.connect, Node >= 20) with a FUNCTION as `buffer`.
 * Node calls that function after every read to learn where the next read goes
 * (lib/internal/stream_base_commons.js onStreamRead; lib/net.js initSocketHandle for the first
 * buffer; the C++ CustomBufferJSListener points libuv, or TLSWrap's cleartext copy, at the returned
 * memory). Checked on Node 20.20 and 24.21: both have the same code path.
 *
 * So the splitter hands out either its reusable read buffer or, while a large frame is being
 * received, `frameBuffer.subarray(filled)`: the kernel (or TLS) writes straight into the frame,
 * which is never assembled from chunks and never concatenated. The ownership rule of the bytes
 * (views of the read buffer valid during the callback, large frames in memory from
 * `sink.allocate()` owned by the sink, abandon() for a frame in progress, no re-entrancy) is
 * written next to FrameSplitter in @kwire/protocol's framing.ts; the socket adds nothing to it.
 */
import { FrameSplitter, type FrameSink, type FrameSplitterOptions } from '@kwire/protocol';

export type { FrameSink };

export type FrameReaderOptions = Omit<FrameSplitterOptions, 'sink'>;

export class FrameReader extends FrameSplitter {
  /** What net.connect / tls.connect take as `onread`. */
  readonly onread: { buffer: () => Buffer; callback: (nread: number, buf: Uint8Array) => boolean };

  constructor(sink: FrameSink, options: FrameReaderOptions = {}) {
    super({ ...options, sink });
    this.onread = {
      buffer: () => this.nextBuffer(),
      callback: (nread: number) => this.onRead(nread),
    };
  }

  /** Bytes received of a frame not yet complete. */
  get pendingBytes(): number {
    return this.pending;
  }
}
