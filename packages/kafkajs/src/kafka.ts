// kafkajs's Kafka client: consumer() is kwire's (this package's Consumer); producer() and admin()
// are kafkajs's own, from the same configuration.
import type { Admin, AdminConfig, GroupDescription, KafkaConfig, Logger, Producer, ProducerConfig } from 'kafkajs-upstream';
import type { ConsumerConfig } from './config.js';
import { Consumer } from './consumer.js';
import { KafkaJSNonRetriableError } from './error-classes.js';
import { toKafkaJSError } from './errors.js';
import { upstream } from './upstream.js';

export class Kafka {
  private readonly config: KafkaConfig;
  /** kafkajs itself, for the producer, the admin client and the logger. */
  private readonly upstream: InstanceType<typeof upstream.Kafka>;

  constructor(config: KafkaConfig) {
    if (config === null || typeof config !== 'object') throw new KafkaJSNonRetriableError(`Invalid Kafka configuration: expected an object, received ${String(config)}`);
    // Brokers are checked when a client connects, as kafkajs does (not here).
    this.config = config;
    this.upstream = new upstream.Kafka(config);
  }

  /** kafkajs's producer, configured from this client's settings. */
  producer(config?: ProducerConfig): Producer {
    return this.upstream.producer(config);
  }

  /** kafkajs's admin client, configured from this client's settings. */
  admin(config?: AdminConfig): Admin {
    return this.upstream.admin(config);
  }

  /** A consumer with kafkajs's API, on kwire. */
  consumer(config: ConsumerConfig): Consumer {
    return new Consumer(
      {
        config: this.config,
        brokers: () => this.brokers(),
        logger: () => this.upstream.logger(),
        topicNames: () => this.withAdmin((admin) => admin.listTopics()),
        describeGroup: (groupId) =>
          this.withAdmin(async (admin) => {
            const { groups } = await admin.describeGroups([groupId]);
            return groups.find((g) => g.groupId === groupId) as GroupDescription;
          }),
      },
      config,
    );
  }

  logger(): Logger {
    return this.upstream.logger();
  }

  /** The brokers: the list, or what the function gives (kafkajs's dynamic brokers). */
  private async brokers(): Promise<string[]> {
    const { brokers } = this.config;
    if (brokers === null || brokers === undefined) throw new KafkaJSNonRetriableError('Failed to connect: brokers should not be null');
    let list: unknown;
    try {
      list = typeof brokers === 'function' ? await brokers() : brokers;
    } catch (err) {
      throw new KafkaJSNonRetriableError(`Failed to connect: brokers function threw: ${(err as Error)?.message ?? String(err)}`);
    }
    if (typeof brokers === 'function' && (!Array.isArray(list) || list.length === 0)) {
      throw new KafkaJSNonRetriableError('Failed to connect: "config.brokers" returned void or empty array');
    }
    if (!Array.isArray(list)) throw new KafkaJSNonRetriableError(`Failed to connect: expected brokers array and got ${typeof list}`);
    if (list.length === 0) throw new KafkaJSNonRetriableError('Failed to connect: brokers array is empty');
    const bad = list.find((b) => typeof b !== 'string' || !/^[^\s]+:\d+$/.test(b));
    if (bad !== undefined) throw new KafkaJSNonRetriableError(`Failed to connect: invalid broker ${String(bad)}: expected host:port`);
    return list as string[];
  }

  /** A short-lived kafkajs admin client (RegExp subscriptions, describeGroup). */
  private async withAdmin<T>(use: (admin: Admin) => Promise<T>): Promise<T> {
    const admin = this.upstream.admin();
    try {
      await admin.connect();
      return await use(admin);
    } catch (err) {
      throw toKafkaJSError(err);
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }
}
