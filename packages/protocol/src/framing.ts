import { KafkaProtocolError } from './errors.js';

/**
 * Splits a byte stream into Kafka frames (int32 size prefix, then that many bytes). Pure: no
 * sockets, feed it chunks.
 *
 * Frames handed to `onFrame` include their size prefix. A frame that lies whole inside one chunk
 * is a view of that chunk (no copy, no concatenation: the common case for small responses); a
 * frame spread over chunks is assembled once into a buffer of exactly its size, allocated when its
 * size is known (not zero-filled). Views are valid as long as the chunk they come from is.
 *
 * A negative size, or one above `maxFrameBytes`, is a KafkaProtocolError: the stream is then out
 * of step and the connection must be dropped.
 */
export class FrameSplitter {
  private readonly maxFrameBytes: number;
  /** A frame being assembled from several chunks, and how much of it is filled. */
  private partial: Buffer | undefined;
  private filled = 0;
  /** Up to 3 bytes of a size prefix split across chunks. */
  private readonly sizeBytes = Buffer.allocUnsafe(4);
  private sizeFilled = 0;
  /** Bytes seen so far, for error offsets. */
  private position = 0;

  constructor(options: { maxFrameBytes?: number } = {}) {
    // Brokers refuse requests above socket.request.max.bytes (100 MiB); a response above 1 GiB
    // means the stream is out of step.
    this.maxFrameBytes = options.maxFrameBytes ?? 1024 * 1024 * 1024;
  }

  /** Bytes of an incomplete frame held back. */
  get pending(): number {
    return this.partial ? this.filled : this.sizeFilled;
  }

  push(chunk: Buffer, onFrame: (frame: Buffer) => void): void {
    let o = 0;
    const n = chunk.length;
    while (o < n) {
      if (this.partial !== undefined) {
        const take = Math.min(this.partial.length - this.filled, n - o);
        chunk.copy(this.partial, this.filled, o, o + take);
        this.filled += take;
        o += take;
        if (this.filled === this.partial.length) {
          const frame = this.partial;
          this.partial = undefined;
          this.filled = 0;
          onFrame(frame);
        }
        continue;
      }
      if (this.sizeFilled > 0 || n - o < 4) {
        // A size prefix split across chunks.
        while (this.sizeFilled < 4 && o < n) this.sizeBytes[this.sizeFilled++] = chunk[o++]!;
        if (this.sizeFilled < 4) break;
        this.sizeFilled = 0;
        const size = this.checkSize(this.sizeBytes.readInt32BE(0), o - 4);
        this.partial = Buffer.allocUnsafe(size + 4);
        this.sizeBytes.copy(this.partial, 0, 0, 4);
        this.filled = 4;
        if (size === 0) {
          const frame = this.partial;
          this.partial = undefined;
          this.filled = 0;
          onFrame(frame);
        }
        continue;
      }
      const size = this.checkSize(chunk.readInt32BE(o), o);
      if (n - o >= size + 4) {
        onFrame(chunk.subarray(o, o + 4 + size));
        o += 4 + size;
      } else {
        this.partial = Buffer.allocUnsafe(size + 4);
        chunk.copy(this.partial, 0, o, n);
        this.filled = n - o;
        o = n;
      }
    }
    this.position += n;
  }

  private checkSize(size: number, at: number): number {
    if (size < 0 || size > this.maxFrameBytes) {
      throw new KafkaProtocolError(size < 0 ? `negative frame size ${size}` : `frame of ${size} bytes exceeds the limit of ${this.maxFrameBytes}`, {
        reason: 'invalid-length',
        offset: this.position + at,
      });
    }
    return size;
  }
}
