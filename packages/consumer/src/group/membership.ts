import type { ResolvedConfig } from '../config.js';
import { BrokerResponseError, KafkaError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { TopicPartition } from './offsets.js';
import { Sleeper } from './sleeper.js';
import { settledBy } from '../deadline.js';
import { tpKey } from '../tp-key.js';

export class FatalGroupError extends BrokerResponseError {
  override name = 'FatalGroupError';
}

/**
 * Whether an error ends the membership (both protocols) instead of being retried after a backoff:
 * a fatal group answer, or a client-side error that no retry can cure. Other error answers from
 * the broker are retried.
 */
function endsMembership(err: unknown): boolean {
  return err instanceof FatalGroupError || (err instanceof KafkaError && !err.retriable && !(err instanceof BrokerResponseError));
}

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
  event<N extends GroupEventName>(name: N, detail: GroupEventDetails[N]): void;
}

/**
 * The detail object of each group event, as the consumer emits it ('rebalance', 'joined', ...).
 * Classic members give their generationId, KIP-848 members their memberEpoch.
 */
export interface GroupEventDetails {
  /** A rebalance starts (a JoinGroup, or a KIP-848 full heartbeat), and why. */
  rebalance: { why: string; memberId: string; generationId?: number; memberEpoch?: number };
  /** The member joined: classic says whether it leads, the protocol (assignor) and the member count. */
  joined: { memberId: string; generationId?: number; memberEpoch?: number; leader?: boolean; protocol?: string | null; members?: number };
  /** A rebalance ended with this assignment (all of it), what it added and what it took away. */
  assigned: { generationId?: number; memberEpoch?: number; assigned: TopicPartition[]; added: TopicPartition[]; revoked: TopicPartition[] };
  /** Partitions given up cleanly (what was finished was committed first). */
  revoked: { partitions: TopicPartition[]; why: string };
  /** Partitions lost (fenced, session expired): nothing was committed for them. */
  lost: { partitions: TopicPartition[]; why: string };
  /** The member left the group; `told`: the coordinator heard of it. */
  left: { why: string; told: boolean };
  /** The application held a batch longer than max.poll.interval.ms: the member leaves. */
  'poll-interval-exceeded': { heldMs: number };
  /** A heartbeat failed (retried): the error's name or message. */
  'heartbeat-error': { error: string; sinceLastOkMs?: number; message?: string | null };
  /** The membership ended on an error no retry cures (also the 'error' event and a stream failure). */
  fatal: { error: Error };
}

export type GroupEventName = keyof GroupEventDetails;

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
  /**
   * Leave the group (close, unsubscribe, poll interval exceeded); resolves when done or timed out,
   * with whether the coordinator heard of it. `deadline` (a Date.now() time) bounds the commit and
   * the leave request.
   */
  leave(why: string, deadline?: number): Promise<boolean>;
  /** Stop for good (close), within `deadline` as leave(). */
  stop(why: string, deadline?: number): Promise<boolean>;
  identity(): GroupIdentity | undefined;
  /**
   * No heartbeat has succeeded for session.timeout.ms (and no join is under way): the coordinator
   * has fenced this member by now, so nothing may be delivered until the loss is processed. Wakes
   * the membership loop so that it processes it at once.
   */
  sessionLapsed(): boolean;
  /** Milliseconds since a heartbeat (or join) last succeeded. */
  sinceLastHeartbeatMs(): number;
  /** Settles when the member first has its assignment (or the membership fails). */
  readonly ready: Promise<void>;
}

/**
 * The lifecycle both protocols share: one loop started once (`run`), a sleeper that rejoin, leave
 * and stop wake, the `ready` promise, and the way out: give up what is owned (committing first),
 * tell the coordinator (`announceLeave`, the protocol's own request), report 'left'.
 */
export abstract class MembershipLifecycle implements Membership {
  protected stopped = false;
  /** Left the group (close, unsubscribe, poll interval exceeded) until rejoin() asks again. */
  protected left = false;
  protected readonly sleeper = new Sleeper();
  private running: Promise<void> | undefined;
  protected resolveReady!: () => void;
  protected rejectReady!: (err: Error) => void;
  readonly ready: Promise<void>;
  /** When a heartbeat (or join) last succeeded: the client's view of the session. */
  protected lastHeartbeatOk = Date.now();
  /** A JoinGroup is out (classic): heartbeats pause; probes of the coordinator stand in for them. */
  protected joining = false;

  constructor(
    protected readonly host: MembershipHost,
    protected readonly config: ResolvedConfig,
  ) {
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    // An unobserved failure before anyone awaits `ready` must not become an unhandled rejection.
    this.ready.catch(() => {});
  }

  abstract identity(): GroupIdentity | undefined;
  abstract rejoin(why: string): void;
  /** The membership loop, until stopped. */
  protected abstract run(): Promise<void>;
  /**
   * Tells the coordinator the member goes (LeaveGroup, or a heartbeat with epoch -1/-2), by
   * `deadline`; resolves with whether it was told (a static member that goes quiet counts as told).
   */
  protected abstract announceLeave(why: string, deadline: number): Promise<boolean>;

  start(): void {
    if (this.running === undefined) this.lastHeartbeatOk = Date.now();
    this.running ??= this.run();
  }

  sinceLastHeartbeatMs(): number {
    return Date.now() - this.lastHeartbeatOk;
  }

  sessionLapsed(): boolean {
    // While joining, a classic member's probes of the coordinator keep lastHeartbeatOk fresh.
    if (this.stopped || this.left) return false;
    if (Date.now() - this.lastHeartbeatOk < this.config.sessionTimeoutMs) return false;
    // A frozen process (a long pause, SIGSTOP) wakes up with data buffered and timers overdue: the
    // loop must process the expiry before anything more is delivered.
    this.sleeper.wake();
    return true;
  }

  protected get log(): Logger {
    return this.config.logger;
  }

  /**
   * If `err` is one no retry cures (endsMembership), ends the membership: the application hears it
   * through the 'fatal' event and `ready`, and the loop stops. Returns whether it did.
   */
  protected endedBy(err: unknown): boolean {
    if (!endsMembership(err)) return false;
    this.log.error('group membership failed', { groupId: this.config.groupId, error: (err as Error).message });
    this.host.event('fatal', { error: err as Error });
    this.rejectReady(err as Error);
    this.stopped = true;
    return true;
  }

  async leave(why: string, deadline = Infinity): Promise<boolean> {
    this.left = true;
    this.sleeper.wake();
    const owned = this.host.owned();
    if (owned.length) await this.host.revoke(owned, `leaving: ${why}`);
    const told = await this.announceLeave(why, deadline);
    this.host.event('left', { why, told });
    return told;
  }

  async stop(why: string, deadline = Infinity): Promise<boolean> {
    if (this.stopped) return false;
    const told = await this.leave(why, deadline);
    this.stopped = true;
    this.sleeper.wake();
    // The loop may be inside a request (a JoinGroup parked for a whole rebalance): it ends when the
    // consumer closes the connections, not before the deadline.
    await settledBy(this.running ?? Promise.resolve(), deadline);
    return told;
  }
}

/** The leave request's timeout: at most 5 s (a leave is a courtesy), and never past the deadline. */
export function leaveTimeoutMs(requestTimeoutMs: number, deadline: number): number {
  return Math.max(1, Math.min(requestTimeoutMs, 5_000, deadline - Date.now()));
}

export function sameTopicPartition(a: TopicPartition, b: TopicPartition): boolean {
  return a.topic === b.topic && a.partition === b.partition;
}

export function tpString(tp: TopicPartition): string {
  return `${tp.topic}-${tp.partition}`;
}

/** a minus b. */
export function difference(a: readonly TopicPartition[], b: readonly TopicPartition[]): TopicPartition[] {
  const set = new Set(b.map((tp) => tpKey(tp.topic, tp.partition)));
  return a.filter((tp) => !set.has(tpKey(tp.topic, tp.partition)));
}
