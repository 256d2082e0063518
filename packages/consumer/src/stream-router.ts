import type { FetchedPartition } from './fetch/fetched-partition.js';
import type { PartitionState } from './state/partition-state.js';
import type { BufferedData } from './state/subscription-state.js';
import { MessageStream, type StreamOwner } from './streams.js';

/**
 * Which message stream each partition feeds: the consumer's default stream, or one of a topic's N
 * streams from streams() (partition p of the topic feeds stream p mod N). The fetcher hands data
 * here; the subscription state tells it when a partition's buffered data is stale (a seek, a
 * reset, a give-back, a revocation), when a partition's reader must see an error, and when a
 * paused partition resumes.
 */
export class StreamRouter implements BufferedData {
  readonly defaultStream: MessageStream;
  private readonly topicStreams = new Map<string, MessageStream[]>();

  constructor(private readonly owner: StreamOwner) {
    this.defaultStream = new MessageStream(owner, undefined, 0);
  }

  /** The stream a partition feeds. */
  streamFor(topic: string, partition: number): MessageStream {
    const streams = this.topicStreams.get(topic);
    return streams ? streams[partition % streams.length]! : this.defaultStream;
  }

  /** Every stream: the default one, then each topic's. */
  streams(): MessageStream[] {
    return [this.defaultStream, ...[...this.topicStreams.values()].flat()];
  }

  /**
   * `n` streams for `topic`, in place of the ones it had: returns them. The topic's partitions
   * (in `assigned`) whose stream changes are returned in `moved`: their buffered data is dropped
   * here, to be fetched again from their positions (the caller asks the subscription state).
   */
  spread(topic: string, n: number, assigned: Iterable<PartitionState>): { streams: MessageStream[]; moved: PartitionState[] } {
    const before = new Map<PartitionState, MessageStream>();
    for (const state of assigned) if (state.topic === topic) before.set(state, this.streamFor(topic, state.partition));
    const streams = Array.from({ length: n }, (_, i) => new MessageStream(this.owner, topic, i));
    const old = this.topicStreams.get(topic) ?? [];
    this.topicStreams.set(topic, streams);
    const moved: PartitionState[] = [];
    for (const [state, stream] of before) {
      if (this.streamFor(topic, state.partition) === stream) continue;
      stream.dropPartition(state.key);
      moved.push(state);
    }
    for (const s of old) s.close();
    return { streams, moved };
  }

  /** Fetched data for its partition's stream; `caughtUp`: it ends at the partition's high watermark. */
  push(data: FetchedPartition, caughtUp: boolean): void {
    this.streamFor(data.state.topic, data.state.partition).push(data, caughtUp);
  }

  drop(state: PartitionState): void {
    this.streamFor(state.topic, state.partition).dropPartition(state.key);
  }

  fail(state: PartitionState, error: Error): void {
    this.streamFor(state.topic, state.partition).fail(error);
  }

  wake(state: PartitionState): void {
    this.streamFor(state.topic, state.partition).wake();
  }

  /** A failure every reader sees (a fatal group error). */
  failAll(error: Error): void {
    for (const s of this.streams()) s.fail(error);
  }

  close(): void {
    for (const s of this.streams()) s.close();
  }
}
