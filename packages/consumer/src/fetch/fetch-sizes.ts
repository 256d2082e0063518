import { adaptsFetchSizes, MAX_ADAPTIVE_PARTITION_FETCH_BYTES, type ResolvedConfig } from '../config.js';

/** The settings fetch sizes follow. */
export type FetchSizeConfig = Pick<
  ResolvedConfig,
  'maxPartitionFetchBytes' | 'maxPartitionFetchBytesExplicit' | 'fetchMaxBytes' | 'maxBufferedBytes' | 'maxBufferedBytesPerPartition' | 'recordBuffers'
>;

/**
 * Each partition's partitionMaxBytes (max.partition.fetch.bytes) in its Fetches: the one owner of
 * those sizes. A setting the user gave is asked for exactly, always. Left unset, it is the default,
 * and a partition that is behind asks for more: a partition whose answer came back full (its bytes
 * reached what was asked: a broker stops there, mid-batch as a rule) with its position still short
 * of the high watermark doubles its size for its next Fetch, up to a ceiling; any other answer (one
 * that was not full, or that reached the high watermark) puts it back to the default. Larger
 * answers mean fewer round trips per byte for a backlog; a caught-up partition gains nothing from
 * them.
 *
 * Growth is for a Fetch that asks for little: a partition grows only while its Fetch, with the
 * step, asks for at most the ceiling in all (one partition to 4 MiB, two to 2 MiB each; four
 * partitions at 1 MiB, none). Larger answers save round trips where one partition's round trips
 * bound the read; with several partitions behind the answer is large already, and growing one of
 * them only made the answer, its memory and its wait longer (analysis.md).
 *
 * Growth comes out of one allowance shared by every partition: what one partition needs to reach
 * the ceiling, and at most half of fetch.max.bytes (or of maxBufferedBytes, if smaller). Together,
 * grown partitions ask for at most that much beyond the default, so however much backlog there is,
 * the rest of a Fetch holds every partition's default (the broker fills partitions in request order
 * up to fetch.max.bytes; 47 partitions at 1 MiB beside one at 4 MiB in 50 MiB). Caught-up
 * partitions are fetched in a lane of their own (fetcher.ts), at the default; the allowance keeps
 * a backlog from crowding out the partitions that are only a little behind. Shared by all brokers
 * rather than split per Fetch: a size then changes only by its own partition's answers. A
 * partition that cannot grow for want of allowance stays where it is; growth of partitions no
 * longer fetched (revoked, paused, failed) is reclaimed then.
 *
 * Sizes change only on answers with data (a partition whose fetch offset moved is in the next
 * incremental fetch session request anyway) or on the first empty answer after growth: sessions
 * stay incremental.
 */
export class FetchSizes {
  /** Partitions above the default, by key (tpKey): their size. The others ask for the default. */
  private readonly grown = new Map<string, number>();
  /** Sum over `grown` of (size - default): the part of the allowance taken. */
  private taken = 0;
  private readonly base: number;
  /** The most one partition asks for. */
  private readonly ceiling: number;
  /** What grown partitions may ask for beyond the default, together. */
  private readonly allowance: number;

  /** `stillFetched`: whether a partition is still assigned and fetched (a grown one that is not gives its growth back). */
  constructor(
    config: FetchSizeConfig,
    private readonly stillFetched: (key: string) => boolean,
  ) {
    this.base = config.maxPartitionFetchBytes;
    // At most a quarter of the per-partition buffer bound, which keeps its room for four answers
    // (config.ts) at any size, and no more than fetch.max.bytes (the broker would cut the answer:
    // not full, back to the default, and growing again).
    // With recordBuffers 'owned' every answer is fresh memory: larger answers cost more page faults
    // than the round trips they save (kwire-owned at 100 B: 5.8M records/s adapting, 9.7M fixed).
    this.ceiling = !adaptsFetchSizes(config) ? this.base : Math.max(this.base, Math.min(MAX_ADAPTIVE_PARTITION_FETCH_BYTES, Math.floor(config.maxBufferedBytesPerPartition / 4), config.fetchMaxBytes));
    // One partition's growth to the ceiling, and never more than half of a Fetch or of the buffered
    // bound. One partition at a time is where growth pays: with several partitions behind, a Fetch
    // at their defaults is large already. More was measured to cost memory for nothing: half of
    // fetch.max.bytes (25 MiB) let answers reach 37 MiB, 64 MiB pool buffers each (analysis.md).
    this.allowance = Math.min(this.ceiling - this.base, Math.floor(Math.min(config.fetchMaxBytes, config.maxBufferedBytes) / 2));
  }

  /** Whether sizes adapt at all (the user left max.partition.fetch.bytes unset, and there is room to grow). */
  get adaptive(): boolean {
    return this.ceiling > this.base;
  }

  /** partitionMaxBytes for the partition's next Fetch. */
  sizeFor(key: string): number {
    return this.grown.get(key) ?? this.base;
  }

  /**
   * A partition's answer without an error: `bytes` of records (all of them, a cut last batch
   * included) for `asked` asked; `behind`: its position after the answer is short of the high
   * watermark; `fetchAsked`: what the whole Fetch asked for, every partition's size summed.
   */
  answered(key: string, asked: number, bytes: number, behind: boolean, fetchAsked: number): void {
    if (!this.adaptive) return;
    const size = this.grown.get(key);
    if (bytes < asked || !behind) {
      if (size !== undefined) this.release(key, size);
      return;
    }
    const current = size ?? this.base;
    const next = Math.min(current * 2, this.ceiling);
    const step = next - current;
    if (step <= 0) return;
    // A Fetch of several partitions behind is large already: none grows past the ceiling in all.
    if (fetchAsked + step > this.ceiling) return;
    if (step > this.allowance - this.taken) this.reclaim();
    // Whole steps only: sizes stay few and round (fewer session changes, easier to read in a trace).
    if (step > this.allowance - this.taken) return;
    this.grown.set(key, next);
    this.taken += step;
  }

  /** Bytes of the shared allowance that grown partitions hold. */
  get allowanceTaken(): number {
    return this.taken;
  }

  private release(key: string, size: number): void {
    this.grown.delete(key);
    this.taken -= size - this.base;
  }

  /** Growth of partitions no longer fetched goes back to the allowance (looked for only when it runs out). */
  private reclaim(): void {
    for (const [key, size] of this.grown) if (!this.stillFetched(key)) this.release(key, size);
  }
}
