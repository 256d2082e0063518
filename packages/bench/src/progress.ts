// Progress on stderr: a line per step (what runs, then what it measured), and, when stderr is a
// terminal, a status line kept at the bottom with the step count, the step's elapsed time and the
// run's, rewritten in place every 250 ms. Never on stdout, which carries the final table.

export class Progress {
  private readonly tty: boolean;
  private readonly started = Date.now();
  private stepStarted = Date.now();
  private current = '';
  private done = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private total: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.tty = Boolean(stream.isTTY);
    if (this.tty) {
      this.timer = setInterval(() => this.paint(), 250);
      this.timer.unref();
    }
  }

  /** A line that stays (above the status line). */
  log(line: string): void {
    if (this.tty) this.stream.write('\r\x1b[K');
    this.stream.write(`[bench] ${line}\n`);
    this.paint();
  }

  /** A step starts: counted, shown in the status line and logged. */
  step(what: string): void {
    this.done++;
    this.current = what;
    this.stepStarted = Date.now();
    // The run's elapsed time on every step line, so that a log (no status line) shows where the time went.
    this.log(`[${this.done}/${this.total}, ${clock(this.stepStarted - this.started)}] ${what}`);
  }

  addSteps(n: number): void {
    this.total += n;
  }

  private paint(): void {
    if (!this.tty || !this.current) return;
    const now = Date.now();
    const line = `  [${this.done}/${this.total}] ${this.current} (${clock(now - this.stepStarted)}; run ${clock(now - this.started)})`;
    this.stream.write(`\r\x1b[K${line.slice(0, (this.stream.columns ?? 120) - 1)}`);
  }

  end(): void {
    clearInterval(this.timer);
    if (this.tty) this.stream.write('\r\x1b[K');
  }
}

/** Minutes:seconds. */
function clock(ms: number): string {
  return `${Math.floor(ms / 60_000)}:${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}`;
}
