import { setImmediate as yieldToLoop } from 'node:timers/promises';

/**
 * When the event loop last ran its timers, for the streams that deliver back to back.
 *
 * Why not "time since this stream last yielded": a reader that awaits nothing but its stream runs
 * from resolved promise to resolved promise, and a setImmediate() yield resumes it in the check
 * phase of the same loop iteration when it was running in the poll phase (woken by a Fetch answer),
 * so one iteration could hold two full intervals of delivery, or one per stream with several
 * streams, before timers ran. The stall probe (2M x 100 B over 12 partitions, 1 ms timer) saw its
 * ticks 4-8 ms apart at full throughput with a 2 ms interval per stream. Measuring from the timers
 * phase itself bounds what all streams together deliver between two runs of the timers.
 *
 * The clock is a 1 ms interval timer that runs only while some stream delivers (started by the
 * first due(), stopped after IDLE_STOP_MS without one), unref'd so it never keeps a process alive.
 */
class LoopClock {
  private timer: NodeJS.Timeout | undefined;
  /** performance.now() when the timers phase last ran this clock's tick (or the clock started). */
  private lastTick = 0;
  private lastBusy = 0;

  /**
   * A stream is about to hand out a batch: whether it has delivered for longer than `intervalMs`
   * since the event loop last ran its timers, and should step out first (see yieldToLoop).
   */
  due(intervalMs: number): boolean {
    const now = performance.now();
    this.lastBusy = now;
    if (this.timer === undefined) {
      this.lastTick = now;
      this.timer = setInterval(() => this.tick(), 1);
      this.timer.unref();
      return false;
    }
    return now - this.lastTick > intervalMs;
  }

  private tick(): void {
    const now = performance.now();
    this.lastTick = now;
    if (now - this.lastBusy > IDLE_STOP_MS) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

/** The clock stops this long after the last delivery (an idle consumer has no 1 ms timer). */
const IDLE_STOP_MS = 100;

/** One clock for the process: the event loop, and so the timers a delivery run delays, are shared by every stream. */
export const loopClock = new LoopClock();

/**
 * Steps out to the event loop: resumes in the check phase of the next iteration at the latest,
 * after the timers and the I/O callbacks that were due.
 */
export { yieldToLoop };
