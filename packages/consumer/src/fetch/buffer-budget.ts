/**
 * Fetched bytes not yet handed to the application and let go (decompressed size once known): in
 * all, and per partition. The fetcher leaves a partition out of its Fetches while its account or
 * the total is at the bound, and looks again when bytes are let go.
 */
export class BufferBudget {
  private bytes = 0;
  private readonly accounts = new Map<string, BufferAccount>();

  /** `released`: bytes were let go (a partition may be fetchable again). */
  constructor(private readonly released: () => void) {}

  get total(): number {
    return this.bytes;
  }

  /** The account of a partition (made on first use, kept: a partition's data may outlive its assignment). */
  of(key: string): BufferAccount {
    let a = this.accounts.get(key);
    if (!a) this.accounts.set(key, (a = new BufferAccount(this)));
    return a;
  }

  /** @internal An account changed by `delta`. */
  changed(delta: number): void {
    this.bytes += delta;
    if (delta < 0) this.released();
  }
}

/** One partition's buffered bytes: + on arrival and decompression, - when memory is let go. */
export class BufferAccount {
  private held = 0;
  constructor(private readonly budget: BufferBudget) {}

  get bytes(): number {
    return this.held;
  }

  add(delta: number): void {
    this.held += delta;
    this.budget.changed(delta);
  }
}
