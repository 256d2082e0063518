/**
 * A response frame shared by the partitions it carries: released when the last of them, and the
 * last batch delivered from it, lets go. The Fetch path and the ShareFetch path both hold their
 * answers' frames (ResponseFrameLease) this way.
 */
export class SharedFrame {
  private refs = 1;
  constructor(private readonly releaseFrame: () => void) {}
  retain(): void {
    this.refs++;
  }
  release(): void {
    // Once at zero the frame is gone: a stray release must not hand it to the pool a second time.
    if (this.refs <= 0) return;
    if (--this.refs === 0) this.releaseFrame();
  }
}
