// Writes a capture folder in the format that format.ts beside it defines and reads (documented in
// test-fixtures/README.md): capture.json, index.jsonl and the raw streams.
import { createWriteStream, mkdirSync, readdirSync, writeFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CAPTURE_FORMAT, CAPTURE_FORMAT_VERSION, CAPTURE_INFO_FILE, INDEX_FILE, streamFileName, type CaptureInfo, type IndexLine, type StreamKind } from './format.js';

/**
 * An append-only file with a byte count. Writes are asynchronous (fs.WriteStream); `write` returns
 * false while the stream's buffer is full, so the caller can pause the socket it reads from.
 */
export class AppendFile {
  /** Bytes written so far: the offset the next write lands at. */
  bytes = 0;
  private readonly stream: WriteStream;
  private failed: Error | undefined;
  private closing: Promise<void> | undefined;

  constructor(path: string) {
    // Owner only: a capture holds whatever crossed the wire (records, and secrets with --keep-secrets).
    this.stream = createWriteStream(path, { mode: 0o600 });
    this.stream.on('error', (err) => {
      this.failed ??= err;
    });
  }

  /**
   * Appends `chunk`. The stream keeps a reference until it is written: the caller must not change
   * the bytes afterwards (socket chunks never are).
   */
  write(chunk: Buffer): boolean {
    this.bytes += chunk.length;
    if (this.failed) return true;
    return this.stream.write(chunk);
  }

  onDrain(fn: () => void): void {
    this.stream.once('drain', fn);
  }

  get error(): Error | undefined {
    return this.failed;
  }

  /** Flushes and closes the file; safe to call again (returns the same promise). */
  close(): Promise<void> {
    this.closing ??= new Promise((resolve) => {
      if (this.stream.closed) return resolve();
      this.stream.once('error', () => resolve());
      this.stream.end(() => resolve());
    });
    return this.closing;
  }
}

export class CaptureWriter {
  readonly dir: string;
  private readonly index: AppendFile;
  private readonly info: CaptureInfo;
  private readonly t0 = performance.now();
  private readonly files: AppendFile[] = [];
  private closed = false;

  /** Creates the folder (it must not hold a capture already) and writes capture.json. */
  constructor(dir: string, info: { recorder: string; target: string; listen: string }) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const existing = readdirSync(dir).filter((f) => f === INDEX_FILE || f.endsWith('.bin'));
    if (existing.length > 0) throw new Error(`${dir} already holds a capture (${existing[0]}); choose an empty folder`);
    this.dir = dir;
    this.info = { format: CAPTURE_FORMAT, formatVersion: CAPTURE_FORMAT_VERSION, recorder: info.recorder, startedAt: new Date().toISOString(), target: info.target, listen: info.listen };
    this.writeInfo();
    this.index = new AppendFile(join(dir, INDEX_FILE));
  }

  /** Milliseconds since the capture started, to the microsecond. */
  now(): number {
    return Math.round((performance.now() - this.t0) * 1000) / 1000;
  }

  line(l: IndexLine): void {
    if (this.closed) return;
    this.index.write(Buffer.from(`${JSON.stringify(l)}\n`));
  }

  stream(conn: number, kind: StreamKind): AppendFile {
    const f = new AppendFile(join(this.dir, streamFileName(conn, kind)));
    this.files.push(f);
    return f;
  }

  /** The first write error of any file, if one failed (disk full, ...). */
  get error(): Error | undefined {
    return this.index.error ?? this.files.find((f) => f.error)?.error;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.index.close(), ...this.files.map((f) => f.close())]);
    this.info.stoppedAt = new Date().toISOString();
    this.writeInfo();
  }

  private writeInfo(): void {
    writeFileSync(join(this.dir, CAPTURE_INFO_FILE), `${JSON.stringify(this.info, null, 2)}\n`, { mode: 0o600 });
  }
}
