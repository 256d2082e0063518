/**
 * Incremental fetch sessions (KIP-227), one per broker. The first request of a session lists every
 * partition (epoch 0 asks the broker to create a session); later ones list only partitions that
 * are new or whose fetch parameters changed, plus the partitions to forget. The broker then answers
 * with only the partitions that have data or errors, which keeps both sides' work proportional to
 * what changed rather than to the number of partitions.
 *
 * Any session error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH,
 * FETCH_SESSION_TOPIC_ID_ERROR), a broken connection, or a broker that does not create sessions
 * sends the next request back to a full one.
 */
export interface SessionPartition {
  readonly key: string;
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly fetchOffset: bigint;
  readonly currentLeaderEpoch: number;
  /** The epoch of the last batch fetched (KIP-320): the leader checks our log against its own. */
  readonly lastFetchedEpoch: number;
  readonly partitionMaxBytes: number;
}

export interface SessionRequest {
  readonly sessionId: number;
  readonly sessionEpoch: number;
  /** Partitions to put in the request (all of them when `full`). */
  readonly partitions: readonly SessionPartition[];
  /** Partitions to forget (incremental requests only). */
  readonly forgotten: readonly SessionPartition[];
  readonly full: boolean;
  /** Every partition the session covers after this request: whose answers may come back. */
  readonly covered: ReadonlyMap<string, SessionPartition>;
}

/** 0 in sessionId: no session. -1 in sessionEpoch: a sessionless (full, one-off) fetch. */
const INITIAL_EPOCH = 0;
const FINAL_EPOCH = -1;

export class FetchSession {
  private sessionId = 0;
  private epoch = INITIAL_EPOCH;
  /**
   * What the broker holds for this session, as we last told it: the `covered` map of the last
   * accepted request itself (never changed in place, so the answer being read keeps its own).
   */
  private known: ReadonlyMap<string, SessionPartition> = new Map();
  /** A broker that never creates sessions (sessions disabled, or its cache full): stay sessionless. */
  private sessionless = false;

  /** The next request for the partitions wanted now. */
  build(wanted: readonly SessionPartition[]): SessionRequest {
    const next = new Map<string, SessionPartition>();
    for (const p of wanted) next.set(p.key, p);
    if (this.sessionId === 0 || this.sessionless) {
      return {
        sessionId: 0,
        sessionEpoch: this.sessionless ? FINAL_EPOCH : INITIAL_EPOCH,
        partitions: wanted,
        forgotten: [],
        full: true,
        covered: next,
      };
    }
    const changed: SessionPartition[] = [];
    for (const p of wanted) {
      const before = this.known.get(p.key);
      if (
        before === undefined ||
        before.fetchOffset !== p.fetchOffset ||
        before.currentLeaderEpoch !== p.currentLeaderEpoch ||
        before.lastFetchedEpoch !== p.lastFetchedEpoch ||
        before.partitionMaxBytes !== p.partitionMaxBytes ||
        before.topicId !== p.topicId
      ) {
        changed.push(p);
      }
    }
    const forgotten: SessionPartition[] = [];
    for (const [key, p] of this.known) if (!next.has(key)) forgotten.push(p);
    return { sessionId: this.sessionId, sessionEpoch: this.epoch, partitions: changed, forgotten, full: false, covered: next };
  }

  /** The broker answered `request` without a session error. */
  accepted(request: SessionRequest, responseSessionId: number): void {
    this.known = request.covered;
    if (request.full) {
      if (responseSessionId === 0) {
        // Asked for a session and got none: the broker will not keep one for us; stay sessionless
        // (Java does the same until the connection changes).
        this.sessionless = request.sessionEpoch === INITIAL_EPOCH;
        this.sessionId = 0;
      } else {
        this.sessionId = responseSessionId;
        this.epoch = 1;
      }
      return;
    }
    // Epochs wrap to 1 after Int32 max (0 means "new session").
    this.epoch = this.epoch >= 0x7fffffff ? 1 : this.epoch + 1;
  }

  /** A session error, a broken connection or a failed request: start over with a full fetch. */
  reset(): void {
    this.sessionId = 0;
    this.epoch = INITIAL_EPOCH;
    this.known = new Map();
    this.sessionless = false;
  }

  /** The request that ends the session on the broker (sent on close), if there is one. */
  closeRequest(): { sessionId: number; sessionEpoch: number } | undefined {
    return this.sessionId === 0 ? undefined : { sessionId: this.sessionId, sessionEpoch: FINAL_EPOCH };
  }

  get id(): number {
    return this.sessionId;
  }
}
