// Small assertions the suites share.

/** What `p` rejects with; throws (failing the test) when it resolves instead. */
export async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}
