// kafkajs's instrumentation events: the names consumer.events holds, and the emitter that hands
// listeners `{ id, type, timestamp, payload }` as kafkajs's does.
import { EventEmitter } from 'node:events';
import type { ConsumerEvents } from 'kafkajs-upstream';

export const CONSUMER_EVENTS: Readonly<ConsumerEvents> = Object.freeze({
  HEARTBEAT: 'consumer.heartbeat',
  COMMIT_OFFSETS: 'consumer.commit_offsets',
  GROUP_JOIN: 'consumer.group_join',
  FETCH: 'consumer.fetch',
  FETCH_START: 'consumer.fetch_start',
  START_BATCH_PROCESS: 'consumer.start_batch_process',
  END_BATCH_PROCESS: 'consumer.end_batch_process',
  CONNECT: 'consumer.connect',
  DISCONNECT: 'consumer.disconnect',
  STOP: 'consumer.stop',
  CRASH: 'consumer.crash',
  REBALANCING: 'consumer.rebalancing',
  RECEIVED_UNSUBSCRIBED_TOPICS: 'consumer.received_unsubscribed_topics',
  REQUEST: 'consumer.network.request',
  REQUEST_TIMEOUT: 'consumer.network.request_timeout',
  REQUEST_QUEUE_SIZE: 'consumer.network.request_queue_size',
} as const);

export type ConsumerEventName = ConsumerEvents[keyof ConsumerEvents];

const NAMES = new Set<string>(Object.values(CONSUMER_EVENTS));

export function isConsumerEventName(name: unknown): name is ConsumerEventName {
  return typeof name === 'string' && NAMES.has(name);
}

/** The list kafkajs names in its error for an unknown event name. */
export const EVENT_KEYS = Object.keys(CONSUMER_EVENTS)
  .map((k) => `consumer.events.${k}`)
  .join(', ');

// kafkajs numbers events from one counter for the process.
let nextId = 0;

export interface Event<T> {
  id: number;
  type: string;
  timestamp: number;
  payload: T;
}

/** Emits an event only when someone listens (kafkajs makes no event object otherwise). */
export class InstrumentationEmitter {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  listening(name: ConsumerEventName): boolean {
    return this.emitter.listenerCount(name) > 0;
  }

  /** Without a payload, the event's payload is undefined, as kafkajs's CONNECT, DISCONNECT and STOP. */
  emit(name: ConsumerEventName, payload?: unknown): void {
    if (this.emitter.listenerCount(name) === 0) return;
    if (nextId === Number.MAX_SAFE_INTEGER) nextId = 0;
    const event: Event<unknown> = { id: nextId++, type: name, timestamp: Date.now(), payload };
    this.emitter.emit(name, event);
  }

  addListener(name: ConsumerEventName, listener: (event: Event<unknown>) => void): () => void {
    this.emitter.addListener(name, listener);
    return () => {
      this.emitter.removeListener(name, listener);
    };
  }
}
