/**
 * A membership loop's pause: sleep(ms) resolves after ms, or at once when wake() is called (a
 * rejoin asked for, the member stopping). One sleeper per loop.
 */
export class Sleeper {
  private waker: (() => void) | undefined;

  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.waker = () => {
        clearTimeout(t);
        resolve();
      };
    }).finally(() => (this.waker = undefined));
  }

  /** Sleeps until woken. */
  untilWoken(): Promise<void> {
    return new Promise<void>((resolve) => (this.waker = resolve)).finally(() => (this.waker = undefined));
  }

  wake(): void {
    this.waker?.();
  }
}
