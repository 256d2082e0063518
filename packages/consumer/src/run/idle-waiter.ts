/** Lets a runner's stop() wait, up to a grace period, for the callbacks under way to settle. */
export class IdleWaiter {
  private wake: (() => void) | undefined;

  /** Nothing is under way any more: a wait in upTo() ends now. */
  idle(): void {
    this.wake?.();
  }

  /** Resolves at the next idle(), or after `ms`, whichever comes first. */
  async upTo(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    this.wake = undefined;
  }
}
