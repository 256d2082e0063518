// A NestJS microservice on @nestjs/microservices' Kafka transport, written as a NestJS user writes
// one, whose `kafkajs` is @kwire/kafkajs through the package.json alias ("kafkajs":
// "workspace:@kwire/kafkajs@*"): Nest's own `import('kafkajs')` and `require('kafkajs')` land on
// the facade, so its consumers (the server's, and ClientKafka's reply consumer) are kwire's, and
// its producers are kafkajs's own, handed over by the facade.
//
// Plain JavaScript (ESM), so nothing compiles it: the decorators a TypeScript app writes as
// `@Controller()` or `@EventPattern(topic)` are applied with Reflect.decorate, which is what
// TypeScript's experimentalDecorators output calls. The classes are made per app because their
// patterns (the topics) are chosen when the app starts: a test gives each run topics of its own.
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientKafka, Ctx, EventPattern, MessagePattern, Payload, Transport } from '@nestjs/microservices';

/** Where `kafkajs` resolves for this app (a file URL): packages/kafkajs's build, not kafkajs itself. */
export const kafkajsUrl = import.meta.resolve('kafkajs');

/** Applies method decorators to `cls.prototype[name]`, as `@decorator` on the method would. */
function decorateMethod(cls, name, ...decorators) {
  const descriptor = Object.getOwnPropertyDescriptor(cls.prototype, name);
  Object.defineProperty(cls.prototype, name, Reflect.decorate(decorators, cls.prototype, name, descriptor));
}

/** A parameter decorator (`@Payload()` on parameter `index`) in the form decorateMethod takes. */
function param(index, decorator) {
  return (target, name) => decorator(target, name, index);
}

/**
 * The app's module: one controller with an event handler (`@EventPattern(topics.event)`: records
 * what it saw in `seen`) and a request handler (`@MessagePattern(topics.request)`: answers `{ sum }`
 * on the request's reply topic).
 */
export function appModule(topics, seen) {
  class OrdersController {
    orderCreated(order, context) {
      seen.push({ order, topic: context.getTopic(), partition: context.getPartition(), offset: context.getMessage().offset });
    }

    sum(request) {
      return { sum: request.numbers.reduce((a, b) => a + b, 0) };
    }
  }
  decorateMethod(OrdersController, 'orderCreated', EventPattern(topics.event), param(0, Payload()), param(1, Ctx()));
  decorateMethod(OrdersController, 'sum', MessagePattern(topics.request), param(0, Payload()));
  Reflect.decorate([Controller()], OrdersController);

  class AppModule {}
  Reflect.decorate([Module({ controllers: [OrdersController] })], AppModule);
  return AppModule;
}

/** The Kafka transport's options shared by the server and the caller (`consumer`: kafkajs consumer options). */
function kafkaOptions({ brokers, clientId, groupId, consumer }) {
  return {
    client: { brokers, clientId },
    consumer: { ...consumer, groupId },
    // A fresh group starts at the beginning: requests sent before the group has joined are answered.
    subscribe: { fromBeginning: true },
  };
}

/**
 * Starts the microservice (listening once this resolves). Nest's logs are limited to warnings and
 * errors; `close()` on the returned app disconnects its consumer and producer.
 */
export async function startServer({ brokers, topics, clientId = 'nest-app', groupId = 'nest-app', consumer, seen = [] }) {
  const app = await NestFactory.createMicroservice(appModule(topics, seen), {
    transport: Transport.KAFKA,
    options: kafkaOptions({ brokers, clientId, groupId, consumer }),
    logger: ['error', 'warn'],
  });
  await app.listen();
  return { app, seen };
}

/**
 * A ClientKafka as another service calls this one: `emit(topic, data)` for events, `send(topic,
 * data)` for requests, whose replies come back on `${topic}.reply` to ClientKafka's own consumer.
 * Not connected: call `subscribeToResponseOf` for each request topic, then `connect()`.
 */
export function createCaller({ brokers, clientId = 'nest-caller', groupId = 'nest-caller', consumer }) {
  return new ClientKafka(kafkaOptions({ brokers, clientId, groupId, consumer }));
}
