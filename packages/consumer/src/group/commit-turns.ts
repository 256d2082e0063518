import { withDeadline } from '../deadline.js';

/**
 * One commit at a time: a commit waits for the one before it to settle (within its deadline)
 * before it reads what to commit, so that commits never overtake each other.
 */
export class CommitTurns {
  private current: Promise<void> | undefined;

  /** The commit under way, if any. */
  get pending(): Promise<void> | undefined {
    return this.current;
  }

  /** Resolves when no commit is under way (a RequestTimeoutError at `deadline`). */
  async turn(deadline: number): Promise<void> {
    while (this.current)
      await withDeadline(
        this.current.catch(() => {}),
        deadline,
        'the commit before this one',
      );
  }

  /** Runs `commit` as the commit under way. */
  run(commit: () => Promise<void>): Promise<void> {
    const current: Promise<void> = commit().finally(() => {
      if (this.current === current) this.current = undefined;
    });
    this.current = current;
    return current;
  }
}
