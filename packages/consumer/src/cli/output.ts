// The CLI's stdout: writes that wait for the reader, and a reader that goes away (`| head` closes
// the pipe: EPIPE) ends the run quietly instead of as an unhandled 'error' event with a stack trace.

export class Output {
  /** The reader went away (EPIPE): nothing more is written, and the run should stop. */
  gone = false;
  /** A write failed for another reason (a full disk, ...): the run stops and says so. */
  error: Error | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly stream: NodeJS.WritableStream = process.stdout,
    private readonly onGone: () => void = () => {},
  ) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (this.gone) return;
      this.gone = true;
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') this.error = err;
      for (const w of this.waiters) w();
      this.waiters.clear();
      this.onGone();
    });
  }

  /** Writes `chunk`; resolves once the stream takes more (or is gone). */
  async write(chunk: string): Promise<void> {
    if (this.gone || chunk === '') return;
    if (this.stream.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.stream.removeListener('drain', done);
        this.waiters.delete(done);
        resolve();
      };
      this.waiters.add(done);
      this.stream.once('drain', done);
    });
  }
}

/** stderr may be a pipe that closes too (`2>&1 | head`): the summary is then lost, not a crash. */
export function quietStderr(): void {
  if (process.stderr.listenerCount('error') === 0) process.stderr.on('error', () => {});
}
