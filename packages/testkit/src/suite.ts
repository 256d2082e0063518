// The preamble of an integration test file against a real broker: the broker (useKafka: the run's
// shared broker under KWIRE_BOOTSTRAP, or one of the file's own), a TestProducer on it, consumers
// made on it with the file's defaults, and a teardown that closes every client the file opened
// before it lets the broker go. Registered as the uvu suite's before() and after() hooks, so the
// broker and the producer exist from the first test on and are reached through the returned object.
import type { Test } from 'uvu';
import { useKafka, type StartKafkaOptions, type TestKafka } from '@kwire/broker';
import { createConsumer, type Consumer } from '@kwire/consumer';
import { TestProducer } from './producer.js';

/** Anything with a close() the teardown should await: a consumer, a share consumer, a pool. */
export interface Closable {
  close(options?: { timeoutMs?: number }): Promise<unknown>;
}

export interface KafkaSuiteOptions {
  /** useKafka's options; special ones (three nodes, SASL, TLS, config) give the file a cluster of its own. */
  kafka?: StartKafkaOptions;
  /** The config every consumer() of the file starts from (bootstrapServers is the suite's broker). */
  consumer?: Record<string, unknown>;
  /** The teardown's close({ timeoutMs }) for each client; close()'s own default when not given. */
  closeTimeoutMs?: number;
}

export interface KafkaSuite {
  /** The broker; set by the suite's before() hook. */
  readonly kafka: TestKafka;
  /** A producer on the broker; set by the suite's before() hook, closed by its after(). */
  readonly producer: TestProducer;
  /** A consumer on the broker: the suite's consumer defaults, then `config`; closed by after(). */
  consumer<K = unknown, V = unknown>(config?: Record<string, unknown>): Consumer<K, V>;
  /** Closes `client` in after(), before the producer and the broker: for clients made another way. */
  track<T extends Closable>(client: T): T;
}

/**
 * Registers the preamble on `test` (uvu's `test`, or a suite of it) and returns what it sets up.
 * Hooks a file registers after this call run after these: a file's own before() finds the broker
 * and the producer ready.
 */
export function kafkaSuite(test: Test, options: KafkaSuiteOptions = {}): KafkaSuite {
  let kafka: TestKafka | undefined;
  let producer: TestProducer | undefined;
  const open: Closable[] = [];
  const notYet = (what: string): never => {
    throw new Error(`kafkaSuite: ${what} is set by the suite's before() hook; use it inside a test or a hook registered after kafkaSuite()`);
  };
  test.before(async () => {
    kafka = await useKafka(options.kafka);
    producer = new TestProducer(kafka.bootstrap);
  });
  test.after(async () => {
    const closeOptions = options.closeTimeoutMs === undefined ? undefined : { timeoutMs: options.closeTimeoutMs };
    await Promise.allSettled(open.map((c) => c.close(closeOptions)));
    await producer?.close();
    await kafka?.release();
  });
  const suite: KafkaSuite = {
    get kafka() {
      return kafka ?? notYet('kafka');
    },
    get producer() {
      return producer ?? notYet('producer');
    },
    consumer<K = unknown, V = unknown>(config: Record<string, unknown> = {}): Consumer<K, V> {
      return suite.track(createConsumer<K, V>({ bootstrapServers: suite.kafka.bootstrap, ...options.consumer, ...config }));
    },
    track<T extends Closable>(client: T): T {
      open.push(client);
      return client;
    },
  };
  return suite;
}
