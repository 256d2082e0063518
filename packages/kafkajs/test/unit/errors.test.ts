// kwire's errors as kafkajs's: class, name, retriable, type and code as kafkajs would have thrown
// them, the kwire error kept as cause; and the classes are kafkajs's own (instanceof works across
// the producer's errors and the consumer's).
import { createRequire } from 'node:module';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AuthenticationError, BrokerResponseError, ClosedError, ConfigError, ConnectionError, CorruptRecordError, OffsetOutOfRangeError, RequestTimeoutError, UsageError } from '@kwire/consumer';
import * as facade from '../../src/index.js';
import { nonRetriable, retriableForKafkaJS, toKafkaJSError } from '../../src/errors.js';

const require = createRequire(import.meta.url);
const kafkajs = require('kafkajs') as Record<string, unknown>;
const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error & { type: string; code: number; retriable: boolean } };

test('every error class kafkajs exports is exported, as the very same class', () => {
  const names = Object.keys(kafkajs).filter((k) => /^KafkaJS.*Error$|^KafkaJS/.test(k) && typeof kafkajs[k] === 'function' && k !== 'KafkaJSFetcherRebalanceError');
  assert.ok(names.length >= 20, `kafkajs exports ${names.length} error classes`);
  for (const name of names) assert.ok((facade as Record<string, unknown>)[name] === kafkajs[name], `${name} is kafkajs's class`);
});

test('broker error codes become KafkaJSProtocolError with kafkajs type, code, retriable and message', () => {
  for (const code of [3, 6, 7, 15, 16, 22, 25, 27, 29, 30, 79, 82]) {
    const e = toKafkaJSError(new BrokerResponseError(code, 'context')) as Error & { type: string; code: number; retriable: boolean; cause?: unknown };
    const expected = createErrorFromCode(code);
    assert.ok(e instanceof facade.KafkaJSProtocolError, `code ${code}: a KafkaJSProtocolError`);
    assert.is(e.name, 'KafkaJSProtocolError');
    assert.is(e.type, expected.type, `code ${code}: type`);
    assert.is(e.code, code);
    assert.is(e.retriable, expected.retriable, `code ${code}: retriable`);
    assert.is(e.message, expected.message);
    assert.ok(e.cause instanceof BrokerResponseError, 'the kwire error is the cause');
  }
});

test('an offset out of range is KafkaJSOffsetOutOfRange with topic and partition, not retriable', () => {
  const e = toKafkaJSError(new OffsetOutOfRangeError('t', 2, 99n)) as Error & { topic: string; partition: number; retriable: boolean; type: string; code: number };
  assert.ok(e instanceof facade.KafkaJSOffsetOutOfRange);
  assert.ok(e instanceof facade.KafkaJSProtocolError);
  assert.is(e.name, 'KafkaJSOffsetOutOfRange');
  assert.is(e.topic, 't');
  assert.is(e.partition, 2);
  assert.is(e.type, 'OFFSET_OUT_OF_RANGE');
  assert.is(e.code, 1);
  assert.is(e.retriable, false);
});

test('connection, timeout, authentication and usage errors map to kafkajs classes and retriable flags', () => {
  const conn = toKafkaJSError(new ConnectionError('h:1', 'refused')) as Error & { broker: string; retriable: boolean };
  assert.ok(conn instanceof facade.KafkaJSConnectionError);
  assert.is(conn.broker, 'h:1');
  assert.is(conn.retriable, true);
  const timeout = toKafkaJSError(new RequestTimeoutError('slow')) as Error & { retriable: boolean };
  assert.ok(timeout instanceof facade.KafkaJSRequestTimeoutError);
  assert.is(timeout.retriable, true);
  const auth = toKafkaJSError(new AuthenticationError('bad password')) as Error & { retriable: boolean };
  assert.ok(auth instanceof facade.KafkaJSSASLAuthenticationError);
  assert.is(auth.name, 'KafkaJSSASLAuthenticationError');
  assert.is(auth.retriable, false);
  for (const kw of [new ConfigError('x'), new UsageError('y'), new ClosedError('the consumer'), new CorruptRecordError('t', 0, 5n, new Error('crc'))]) {
    const e = toKafkaJSError(kw) as Error & { retriable: boolean; cause?: unknown };
    assert.ok(e instanceof facade.KafkaJSNonRetriableError, `${kw.name} is a KafkaJSNonRetriableError`);
    assert.is(e.retriable, false);
    assert.ok(e.cause === kw);
  }
});

test("the application's own errors pass through; kafkajs's retriable rule for them", () => {
  const mine = new Error('mine');
  assert.ok(toKafkaJSError(mine) === mine);
  const already = new facade.KafkaJSError('already');
  assert.ok(toKafkaJSError(already) === already);
  assert.ok(toKafkaJSError('text') instanceof facade.KafkaJSError);
  assert.is(retriableForKafkaJS(new Error('x')), true);
  assert.is(retriableForKafkaJS(new TypeError('x')), false);
  assert.is(retriableForKafkaJS(new RangeError('x')), false);
  assert.is(retriableForKafkaJS(new facade.KafkaJSNonRetriableError('x')), false);
  assert.is(retriableForKafkaJS(Object.assign(new Error('x'), { retriable: false })), false);
  const wrapped = nonRetriable(new TypeError('boom')) as Error & { cause?: unknown; retriable: boolean };
  assert.ok(wrapped instanceof facade.KafkaJSNonRetriableError);
  assert.is(wrapped.retriable, false);
  assert.ok(wrapped.cause instanceof TypeError);
});

test("logLevel, CompressionTypes, PartitionAssigners and AssignerProtocol are kafkajs's", () => {
  assert.equal(facade.logLevel, kafkajs.logLevel);
  assert.ok(facade.CompressionTypes === kafkajs.CompressionTypes);
  assert.is(facade.CompressionTypes.GZIP, 1);
  assert.ok(facade.PartitionAssigners.roundRobin === (kafkajs.PartitionAssigners as { roundRobin: unknown }).roundRobin);
  assert.ok(facade.AssignerProtocol === kafkajs.AssignerProtocol);
});

test.run();
