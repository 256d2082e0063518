// The NestJS proof: packages/kafkajs/nest-app, a NestJS microservice on
// @nestjs/microservices' Kafka transport whose `kafkajs` is aliased to @kwire/kafkajs, answers an
// event pattern and a request-response pattern (the reply on the request's reply topic, to a
// ClientKafka) on a real broker, with kwire's consumers (the server's and ClientKafka's reply
// consumer, which joins with Nest's own partition assigner) and kafkajs's producers; then closes.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { kafkaSuite, settlesWithin, until } from '@kwire/testkit';
import type * as NestApp from '../../nest-app/src/app.js';

type Server = Awaited<ReturnType<typeof NestApp.startServer>>['app'];
type Caller = ReturnType<typeof NestApp.createCaller>;

// From dist/test/integration: the app's source (plain JS, not compiled) and the facade's build.
const appUrl = new URL('../../../nest-app/src/app.js', import.meta.url);
const facadeUrl = new URL('../../src/index.js', import.meta.url);

// kafkajs's producer (Nest's replies and ClientKafka's sends) warns of its v2 partitioner change on every start.
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

const run = Date.now().toString(36);
const env = kafkaSuite(test);
const WAIT_MS = 30_000;

// Closed by the test (bounded, asserted); the suite's after() closes whatever a failed test left,
// before it lets the broker go.
let server: Server | undefined;
let caller: Caller | undefined;
env.track({ close: () => Promise.allSettled([server?.close(), caller?.close()]) });

/** The last value of a Nest client observable once it completes (no rxjs import needed here). */
function completion<T>(observable: { subscribe(o: { next(v: T): void; error(e: unknown): void; complete(): void }): unknown }, what: string): Promise<T | undefined> {
  let last: T | undefined;
  const done = new Promise<T | undefined>((resolve, reject) => observable.subscribe({ next: (v) => (last = v), error: reject, complete: () => resolve(last) }));
  return settlesWithin(done, WAIT_MS, what);
}

test('kafkajs resolves to @kwire/kafkajs for the app and for @nestjs/microservices', async () => {
  const app = (await import(appUrl.href)) as typeof NestApp;
  assert.is(app.kafkajsUrl, facadeUrl.href);
  // Nest loads it itself, by `import('kafkajs')` and (its reply assigner) `require('kafkajs')`, from its own folder.
  const fromNest = createRequire(createRequire(fileURLToPath(appUrl)).resolve('@nestjs/microservices'));
  assert.is(fromNest.resolve('kafkajs'), fileURLToPath(facadeUrl));
});

test('an @EventPattern handler sees the event, a @MessagePattern handler answers on the reply topic, through kwire', async () => {
  const app = (await import(appUrl.href)) as typeof NestApp;
  const facade = (await import(facadeUrl.href)) as { Kafka: unknown; Consumer: unknown };
  const topics = { event: `nest-orders-${run}`, request: `nest-sum-${run}` };
  await env.producer.createTopics([topics.event, topics.request, `${topics.request}.reply`]);
  const brokers = [env.kafka.bootstrap];

  const started = await settlesWithin(app.startServer({ brokers, topics, groupId: `nest-app-${run}` }), WAIT_MS, 'the microservice listening');
  server = started.app;
  caller = app.createCaller({ brokers, groupId: `nest-caller-${run}` });
  caller.subscribeToResponseOf(topics.request);
  await settlesWithin(caller.connect(), WAIT_MS, 'ClientKafka connected');
  // ClientKafka addresses each request's reply to the lowest reply partition its consumer holds:
  // it can send once its consumer has joined (GROUP_JOIN's memberAssignment, Nest's own assigner).
  const c = caller;
  await until('ClientKafka assigned its reply topic', () => c.getConsumerAssignments()[`${topics.request}.reply`] === 0, WAIT_MS);

  await completion(caller.emit(topics.event, { id: 7, item: 'book' }), 'the event sent');
  await until('the event handler saw the event', () => started.seen.length > 0, WAIT_MS);
  assert.equal(started.seen, [{ order: { id: 7, item: 'book' }, topic: topics.event, partition: 0, offset: '0' }]);

  const reply = await completion(caller.send(topics.request, { numbers: [1, 2, 3, 4] }), 'the reply');
  assert.equal(reply, { sum: 10 });

  // The consumers at work are kwire's: Nest's client is the facade's Kafka, and the server's
  // consumer, like ClientKafka's reply consumer, is the facade's Consumer (a class kafkajs does not
  // have: its consumers are plain objects).
  const [client, consumer] = server.unwrap<[unknown, unknown, unknown]>();
  assert.instance(client, facade.Kafka);
  assert.instance(consumer, facade.Consumer);
  assert.instance(caller.consumer, facade.Consumer);

  // Bounded close: Nest disconnects the server's consumer and producer, then the caller's.
  await settlesWithin(server.close(), 20_000, 'the microservice closed');
  server = undefined;
  await settlesWithin(caller.close(), 20_000, 'ClientKafka closed');
  caller = undefined;
});

test.run();
