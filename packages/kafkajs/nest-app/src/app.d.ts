// Types of app.js, for the TypeScript test that starts it (app.js itself is plain JavaScript).
import type { INestMicroservice } from '@nestjs/common';
import type { ClientKafka } from '@nestjs/microservices';

export interface AppTopics {
  /** The @EventPattern handler's topic. */
  event: string;
  /** The @MessagePattern handler's topic; its replies go to `${request}.reply`. */
  request: string;
}

/** What the event handler saw of one event. */
export interface SeenEvent {
  order: unknown;
  topic: string;
  partition: number;
  offset: string;
}

export interface ClientConfig {
  brokers: string[];
  clientId?: string;
  groupId?: string;
  /** kafkajs consumer options (Nest's `options.consumer`); the group id is `groupId`'s. */
  consumer?: Record<string, unknown>;
}

export declare const kafkajsUrl: string;
export declare function appModule(topics: AppTopics, seen: SeenEvent[]): new () => object;
export declare function startServer(config: ClientConfig & { topics: AppTopics; seen?: SeenEvent[] }): Promise<{ app: INestMicroservice; seen: SeenEvent[] }>;
export declare function createCaller(config: ClientConfig): ClientKafka;
