import type { TopicPartition } from './offsets.js';

/** What a group membership (classic or KIP-848) needs from the consumer it serves. */
export interface MembershipHost {
  /** Topic names the member subscribes to now (a pattern already resolved against metadata). */
  subscribedTopics(): string[];
  /** For KIP-848: the pattern, passed to the broker as SubscribedTopicRegex. */
  subscribedPattern(): string | null;
  /** Partitions the member owns now. */
  owned(): TopicPartition[];
  /** Start consuming these (committed offsets fetched first). */
  assign(partitions: TopicPartition[], why: string): Promise<void>;
  /** Stop consuming these after committing what was processed (a clean handover). */
  revoke(partitions: TopicPartition[], why: string): Promise<void>;
  /** Stop consuming these without committing (the member lost them: fenced, expired). */
  lose(partitions: TopicPartition[], why: string): Promise<void>;
  /** Group events for the application and the debug log. */
  event(name: GroupEventName, detail: Record<string, unknown>): void;
}

export type GroupEventName =
  | 'rebalance'
  | 'joined'
  | 'assigned'
  | 'revoked'
  | 'lost'
  | 'left'
  | 'poll-interval-exceeded'
  | 'heartbeat-error'
  | 'fatal';

/** The membership identity used by commits. */
export interface GroupIdentity {
  memberId: string;
  /** Classic: the generation; KIP-848: the member epoch. */
  generation: number;
  groupInstanceId: string | null;
  consumerProtocol: boolean;
}

export interface Membership {
  start(): void;
  /** Ask for a rejoin (classic) or a full heartbeat (KIP-848), with the reason. */
  rejoin(why: string): void;
  /** Leave the group (close, unsubscribe, poll interval exceeded); resolves when done or timed out. */
  leave(why: string): Promise<void>;
  /** Stop for good (close). */
  stop(why: string): Promise<void>;
  identity(): GroupIdentity | undefined;
  /** Settles when the member first has its assignment (or the membership fails). */
  readonly ready: Promise<void>;
}

export function sameTopicPartition(a: TopicPartition, b: TopicPartition): boolean {
  return a.topic === b.topic && a.partition === b.partition;
}

export function tpString(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}

/** a minus b. */
export function difference(a: readonly TopicPartition[], b: readonly TopicPartition[]): TopicPartition[] {
  const set = new Set(b.map((tp) => `${tp.topic}\u0000${tp.partition}`));
  return a.filter((tp) => !set.has(`${tp.topic}\u0000${tp.partition}`));
}
