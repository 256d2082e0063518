// Issue 29, item 3: every argument checked as strictly as the configuration, with the kwire way
// for kafkajs and Java spellings and "did you mean" for near misses (usage.ts, spelling.ts, and
// the configuration's unknown keys in config.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, UsageError } from '../../src/index.js';
import { JAVA_NAMES, resolveConfig } from '../../src/internals.js';
import { KWIRE_OPTIONS } from '../../src/config.js';
import { editDistance, FOREIGN_NAMES, nearest } from '../../src/spelling.js';
import * as usage from '../../src/usage.js';

/** fn throws a UsageError (code KWIRE_USAGE) whose message matches every pattern. */
function refuses(fn: () => unknown, ...patterns: RegExp[]): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof UsageError, `a UsageError, not ${String(caught)}`);
  assert.is((caught as UsageError).code, 'KWIRE_USAGE');
  for (const p of patterns) assert.match((caught as Error).message, p);
}

function configRefuses(config: Record<string, unknown>, ...patterns: RegExp[]): void {
  let caught: unknown;
  try {
    resolveConfig({ bootstrapServers: 'a:1', ...config });
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof ConfigError, `a ConfigError for ${JSON.stringify(config)}, not ${String(caught)}`);
  for (const p of patterns) assert.match((caught as Error).message, p, JSON.stringify(config));
}

test('spelling: edit distance with transpositions, near misses by normalized name and length', () => {
  assert.is(editDistance('grupid', 'groupid'), 1);
  assert.is(editDistance('ab', 'ba'), 1);
  assert.is(editDistance('', 'abc'), 3);
  assert.is(editDistance('kitten', 'sitting'), 3);
  assert.is(nearest('grupId', ['groupId', 'clientId']), 'groupId');
  assert.is(nearest('group_id', ['groupId']), 'groupId', 'separators and case do not count');
  assert.is(nearest('GROUP.ID', ['groupId']), 'groupId');
  assert.is(nearest('fetchMaxWait', ['fetchMaxWaitMs', 'fetchMaxBytes']), 'fetchMaxWaitMs');
  assert.is(nearest('abc', ['xyz']), undefined, 'short names are not matched to anything');
  assert.is(nearest('foo', ['fooBarBazQux']), undefined);
  assert.is(nearest('topic', ['topic']), undefined, 'the name itself is no suggestion');
});

test('spelling: every configuration key an advice names exists in the configuration', () => {
  const resolved = resolveConfig({ bootstrapServers: 'a:1' }) as unknown as Record<string, unknown>;
  for (const [name, foreign] of Object.entries(FOREIGN_NAMES)) {
    assert.ok(!(name in resolved) && !Object.values(JAVA_NAMES).includes(name), `${name} is foreign, not kwire's`);
    for (const key of foreign.config) {
      assert.ok(key in resolved, `${name}'s advice names ${key}, a key of ResolvedConfig`);
      assert.ok(Object.hasOwn(JAVA_NAMES, key) || KWIRE_OPTIONS.includes(key), `${key} is accepted by resolveConfig`);
      assert.match(foreign.use, new RegExp(`\\b${key}\\b`), `${name}'s advice says ${key}`);
    }
  }
});

test('configuration: kafkajs spellings name the kwire option, near misses get "did you mean"', () => {
  const cases: [string, RegExp[]][] = [
    ['grupId', [/unknown configuration option "grupId": did you mean groupId \(group\.id\)\?/]],
    ['group_id', [/did you mean groupId \(group\.id\)\?/]],
    ['fetch.max.wait', [/did you mean fetchMaxWaitMs \(fetch\.max\.wait\.ms\)\?/]],
    ['fetchMaxWait', [/unknown configuration option "fetchMaxWait": did you mean fetchMaxWaitMs/]],
    ['fromBeginning', [/kafkajs's subscribe\(\) option/, /autoOffsetReset: 'earliest'/]],
    ['partitionsConsumedConcurrently', [/kafkajs's run\(\) option/, /run\(\{ maxConcurrency: N, ordering: 'partition' \}\)/]],
    ['autoCommit', [/enableAutoCommit: false/]],
    ['autoCommitInterval', [/autoCommitIntervalMs \(auto\.commit\.interval\.ms\)/]],
    ['autoCommitThreshold', [/no commit threshold/, /commitSync\(\)/]],
    ['sessionTimeout', [/sessionTimeoutMs \(session\.timeout\.ms\)/]],
    ['heartbeatInterval', [/heartbeatIntervalMs \(heartbeat\.interval\.ms\)/]],
    ['rebalanceTimeout', [/maxPollIntervalMs \(max\.poll\.interval\.ms\)/, /rebalance timeout/]],
    ['maxBytesPerPartition', [/maxPartitionFetchBytes \(max\.partition\.fetch\.bytes\)/]],
    ['maxBytes', [/fetchMaxBytes \(fetch\.max\.bytes\)/]],
    ['minBytes', [/fetchMinBytes \(fetch\.min\.bytes\)/]],
    ['maxWaitTimeInMs', [/fetchMaxWaitMs \(fetch\.max\.wait\.ms\)/]],
    ['readUncommitted', [/isolationLevel \(isolation\.level\)/, /'read_committed' \(kafkajs's default\)/]],
    ['brokers', [/kafkajs's client option/, /bootstrapServers \(bootstrap\.servers\)/]],
    ['retry', [/retryBackoffMs and retryBackoffMaxMs/, /onFailure/]],
    ['logLevel', [/consoleLogger\(/, /silentLogger/]],
    ['logCreator', [/set logger/, /\(message, fields\)/]],
    ['metadataMaxAge', [/metadataMaxAgeMs/]],
    ['rackId', [/clientRack \(client\.rack\)/]],
    ['partitionAssigners', [/partitionAssignmentStrategy/]],
    ['connectionTimeout', [/socketConnectionSetupTimeoutMs/]],
    ['allowAutoTopicCreation', [/never asks the broker to create a topic/]],
    ['allow.auto.create.topics', [/a Java consumer setting/, /create it before consuming/]],
    ['eachBatchAutoResolve', [/it is a run\(\) option: consumer\.run\(\{ eachBatch, eachBatchAutoResolve \}\)/]],
    ['eachMessage', [/a run\(\) option/]],
    ['topics', [/a subscribe\(\) option/]],
    ['nonsense', [/^unknown configuration option "nonsense"$/]],
  ];
  for (const [key, patterns] of cases) configRefuses({ [key]: 1 }, ...patterns);
  // kwire's own names are taken, clientId among them.
  const c = resolveConfig({ bootstrapServers: 'a:1', clientId: 'me', groupId: 'g', autoOffsetReset: 'earliest', enableAutoCommit: false, logger: undefined });
  assert.is(c.clientId, 'me');
  // A Java deserializer class is answered with the kwire value.
  configRefuses({ 'value.deserializer': 'org.apache.kafka.common.serialization.StringDeserializer' }, /Java's StringDeserializer is 'string'/);
  configRefuses({ keyDeserializer: 'org.apache.kafka.common.serialization.ByteArrayDeserializer' }, /Java's ByteArrayDeserializer is 'buffer'/);
});

test('subscribe(): { topics } or { pattern }; kafkajs shapes and options name the kwire way', () => {
  const topics = ['a', 'b'];
  assert.equal(usage.subscription({ topics }), { topics: ['a', 'b'] });
  assert.equal(usage.subscription({ topics: new Set(['a']) }), { topics: ['a'] });
  const pattern = /^ev-.*/;
  assert.is((usage.subscription({ pattern }) as { pattern: RegExp }).pattern, pattern);
  assert.equal(usage.subscription({ pattern: 'ev-.*' }), { pattern: 'ev-.*' });
  refuses(
    () => usage.subscription({ topics, fromBeginning: true }),
    /^subscribe\(\): fromBeginning is kafkajs's subscribe\(\) option: set autoOffsetReset: 'earliest' in createConsumer\(\)'s configuration/,
  );
  refuses(() => usage.subscription({ topic: 'a' }), /subscribe\(\) takes \{ topics: \["a"\] \}, not kafkajs's \{ topic \}/);
  refuses(() => usage.subscription({ topic: /a.*/ }), /\{ pattern: \/a\.\*\/ \}/);
  refuses(() => usage.subscription({ topics: ['a', /b.*/] }), /\/b\.\*\/ in topics is a pattern: give \{ pattern: \/b\.\*\/ \}/);
  refuses(() => usage.subscription({ topics: 'a' }), /topics must be a list: \{ topics: \["a"\] \}/);
  refuses(() => usage.subscription({ topics: /a/ }), /a pattern goes in \{ pattern: \/a\/ \}/);
  refuses(() => usage.subscription({ topics: [] }), /topics is empty/);
  refuses(() => usage.subscription({ topics: ['a', ''] }), /topic must be a non-empty string, not ""/);
  refuses(() => usage.subscription({ topics: ['a', 3] }), /topic must be a non-empty string, not 3/);
  refuses(() => usage.subscription({ topics, pattern }), /topics or a pattern, not both/);
  refuses(() => usage.subscription({ topcs: ['a'] }), /unknown option "topcs": did you mean topics\?/);
  refuses(() => usage.subscription({ topics, groupId: 'g' }), /groupId is a configuration option: give it to createConsumer\(\)/);
  refuses(() => usage.subscription({ pattern: '(' }), /pattern "\(" is not a valid regular expression/);
  refuses(() => usage.subscription({ pattern: 5 }), /pattern must be a RegExp or its source/);
  refuses(() => usage.subscription(['a']), /not a list: subscribe\(\{ topics: \["a"\] \}\)/);
  refuses(() => usage.subscription('a'), /not a string: subscribe\(\{ topics: \["a"\] \}\)/);
  refuses(() => usage.subscription(/a/), /not a RegExp: subscribe\(\{ pattern: \/a\/ \}\)/);
  refuses(() => usage.subscription(undefined), /subscribe\(\) takes \{ topics/);
  refuses(() => usage.subscription({}), /subscribe\(\) needs \{ topics/);
});

test('subscribe(): the rebalance listener', () => {
  const listener = { onPartitionsAssigned() {} };
  assert.is(usage.rebalanceListener(listener), listener);
  assert.is(usage.rebalanceListener(undefined), undefined);
  class Listener {
    onPartitionsRevoked(): void {}
  }
  const instance = new Listener();
  assert.is(usage.rebalanceListener(instance), instance, 'methods on a prototype count');
  refuses(() => usage.rebalanceListener(() => {}), /an object with onPartitionsRevoked, onPartitionsAssigned, onPartitionsLost/);
  refuses(() => usage.rebalanceListener({ onPartitionsAssigned: 5 }), /onPartitionsAssigned must be a function, not 5/);
  refuses(() => usage.rebalanceListener({ onPartitionAssigned() {} }), /onPartitionAssigned is not a listener method: did you mean onPartitionsAssigned\?/);
  refuses(() => usage.rebalanceListener({}), /has none of onPartitionsRevoked/);
  refuses(() => usage.rebalanceListener('x'), /must be an object/);
});

test('one partition: { topic, partition }, the object itself returned', () => {
  const tp = { topic: 'a', partition: 0 };
  assert.is(usage.topicPartition(tp, 'position()'), tp);
  const record = { topic: 'a', partition: 1, offset: 5n, value: null };
  assert.is(usage.topicPartition(record, 'position()'), record, 'other keys are let through (a record names its partition)');
  refuses(() => usage.topicPartition([tp], 'position()'), /position\(\) takes one partition, not a list/);
  refuses(() => usage.topicPartition(undefined, 'position()'), /undefined is not a partition: give \{ topic, partition \}/);
  refuses(() => usage.topicPartition({ topic: 'a', partitions: [0] }, 'seek()'), /seek\(\) takes one partition \{ topic, partition \}, not kafkajs's \{ topic, partitions \}/);
  refuses(() => usage.topicPartition({ topic: 'a', partiton: 0 }, 'x()'), /has no partition/, /"partiton" is not "partition"/);
  refuses(() => usage.topicPartition({ topc: 'a', partition: 0 }, 'x()'), /has no topic/, /"topc" is not "topic"/);
  refuses(() => usage.topicPartition({ topic: 'a', partition: '0' }, 'x()'), /partition must be an integer from 0, not "0"/);
  refuses(() => usage.topicPartition({ topic: 'a', partition: -1 }, 'x()'), /partition must be an integer from 0, not -1/);
  refuses(() => usage.topicPartition({ topic: '', partition: 0 }, 'x()'), /topic must be a non-empty string/);
});

test('lists of partitions: arrays, Sets, kafkajs { topic, partitions? }; assignment checked before anything is done', () => {
  const a0 = { topic: 'a', partition: 0 };
  const assigned = [
    { topic: 'a', partition: 0 },
    { topic: 'a', partition: 1 },
    { topic: 'b', partition: 0 },
  ];
  const list = usage.partitionList([a0], 'pause()', assigned);
  assert.is(list[0], a0, 'the objects given are kept');
  assert.equal(usage.partitionList(new Set([a0]), 'pause()', assigned), [a0]);
  assert.equal(usage.partitionList([{ topic: 'a', partitions: [1, 0] }], 'pause()', assigned), [
    { topic: 'a', partition: 1 },
    { topic: 'a', partition: 0 },
  ]);
  assert.equal(usage.partitionList([{ topic: 'a' }], 'pause()', assigned), [
    { topic: 'a', partition: 0 },
    { topic: 'a', partition: 1 },
  ]);
  assert.equal(usage.partitionList([{ topic: 'a', partitions: [3] }], 'committed()'), [{ topic: 'a', partition: 3 }], 'without an assignment: not checked');
  refuses(() => usage.partitionList([{ topic: 'a' }], 'committed()'), /names no partition: give \{ topic, partition \} or \{ topic, partitions: \[0, 1\] \}/);
  refuses(() => usage.partitionList([{ topic: 'c' }], 'pause()', assigned), /pause\(\): no partition of c is assigned to this consumer \(assigned now: a-0, a-1, b-0\)/);
  refuses(
    () =>
      usage.partitionList(
        [
          { topic: 'a', partition: 0 },
          { topic: 'a', partition: 7 },
        ],
        'pause()',
        assigned,
      ),
    /pause\(\): a-7 is not assigned to this consumer/,
  );
  refuses(() => usage.partitionList([a0], 'pause()', []), /nothing is assigned now/);
  refuses(() => usage.partitionList([{ topic: 'a', partitions: ['0'] }], 'pause()', assigned), /partition must be an integer from 0, not "0"/);
  refuses(() => usage.partitionList([{ topic: 'a', partitions: 0 }], 'pause()', assigned), /partitions must be a list of partition numbers/);
  refuses(() => usage.partitionList([{ topic: 'a', partition: 0, partitions: [1] }], 'pause()'), /gives both partition and partitions/);
  refuses(() => usage.partitionList([{ topic: 'a', partiton: 0 }], 'pause()', assigned), /"partiton" is not "partition"/);
  refuses(() => usage.partitionList(a0, 'pause()'), /pause\(\) takes a list of \{ topic, partition \}, not one: pause\(\[\{"topic":"a","partition":0\}\]\)/);
  refuses(() => usage.partitionList(new Map([[a0, 1]]), 'pause()'), /not a Map/);
  refuses(() => usage.partitionList('a', 'endOffsets()'), /endOffsets\(\) takes a list of \{ topic, partition \}, not "a"/);
  refuses(() => usage.partitionList(undefined, 'resume()'), /resume\(\) takes a list/);
});

test('offsets, start offsets and times', () => {
  assert.is(usage.offset(5, 'x()'), 5n);
  assert.is(usage.offset(5n, 'x()'), 5n);
  refuses(() => usage.offset(-1, 'x()'), /offset -1 is the protocol's "latest": give 'latest'/);
  refuses(() => usage.offset(-2n, 'x()'), /offset -2 is the protocol's "earliest": give 'earliest'/);
  refuses(() => usage.offset(-5, 'x()'), /offset -5 is negative/);
  refuses(() => usage.offset(2 ** 60, 'x()'), /not a safe integer: give a bigint/);
  refuses(() => usage.offset('12', 'x()'), /the offset "12" is a string \(kafkajs's offsets are\): give 12n/);
  refuses(() => usage.offset(null, 'x()'), /offset must be a bigint \(or a safe integer\) from 0, not null/);
  assert.is(usage.startOffset('earliest', 'x()'), 'earliest');
  assert.is(usage.startOffset('latest', 'x()'), 'latest');
  assert.is(usage.startOffset(3, 'x()'), 3n);
  assert.equal(usage.startOffset({ timestamp: 1_000 }, 'x()'), { timestamp: 1_000n });
  refuses(() => usage.startOffset('beginning', 'x()'), /"beginning" is not a start offset: did you mean 'earliest'\?/);
  refuses(() => usage.startOffset('end', 'x()'), /did you mean 'latest'\?/);
  refuses(() => usage.startOffset('earlist', 'x()'), /did you mean 'earliest'\?/);
  refuses(() => usage.startOffset('42', 'x()'), /is a string .*give 42n/);
  refuses(() => usage.startOffset({ offset: 5n }, 'x()'), /give the offset itself \(5n\)/);
  refuses(() => usage.startOffset({ timestamp: 5, ofset: 1 }, 'x()'), /unknown option "ofset"/);
  refuses(() => usage.startOffset(new Date(0), 'x()'), /is not a start offset/);
  refuses(() => usage.startOffset(undefined, 'x()'), /undefined is not a start offset: give an offset \(a bigint\), 'earliest', 'latest' or \{ timestamp: ms \}/);
  assert.is(usage.timestamp(7, 'x()'), 7n);
  refuses(() => usage.timestamp(-5, 'x()'), /timestamp -5 is not a non-negative integer of milliseconds since the epoch/);
  refuses(() => usage.timestamp(-1, 'x()'), /use endOffsets\(\)/);
  refuses(() => usage.timestamp(-2, 'x()'), /use beginningOffsets\(\)/);
  refuses(() => usage.timestamp(new Date(0), 'x()'), /give date\.getTime\(\)/);
  refuses(() => usage.timestamp('2026-01-01', 'x()'), /Date\.parse\("2026-01-01"\)/);
});

test('assign(): { topic, partition, offset? } each, once, offsets checked; the objects given returned', () => {
  const a = { topic: 'a', partition: 0, offset: 'earliest' as const };
  const b = { topic: 'a', partition: 1 };
  const out = usage.assignments([a, b]);
  assert.is(out[0], a);
  assert.is(out[1], b);
  assert.equal(usage.assignments(new Set([b])), [b]);
  refuses(() => usage.assignments([{ topic: 'a', partitions: [0, 1] }]), /one entry per partition/, /\[\{"topic":"a","partition":0\},\{"topic":"a","partition":1\}\]/);
  refuses(() => usage.assignments([{ topic: 'a', partition: 0, ofset: 5 }]), /unknown option "ofset": did you mean offset\?/);
  refuses(() => usage.assignments([{ topic: 'a', partition: 0, fromBeginning: true }]), /fromBeginning is kafkajs's subscribe\(\) option/);
  refuses(() => usage.assignments([b, { topic: 'a', partition: 1 }]), /a-1 is given twice/);
  refuses(() => usage.assignments([{ topic: 'a', partition: 0, offset: -1 }]), /assign\(\): a-0: offset -1 is the protocol's "latest"/);
  refuses(() => usage.assignments([b], true), /a-1 has no offset and autoOffsetReset \(auto\.offset\.reset\) is none/);
  assert.equal(usage.assignments([a], true), [a]);
  refuses(() => usage.assignments({ topic: 'a', partition: 0 }), /assign\(\) takes a list of \{ topic, partition, offset\? \}, not one/);
  refuses(() => usage.assignments(new Map()), /not a Map/);
});

test('commitSync(): a list or a Map, offsets as bigints, kafkajs string offsets named', () => {
  assert.is(usage.offsetsToCommit(undefined), undefined);
  assert.equal(usage.offsetsToCommit([{ topic: 'a', partition: 0, offset: 5 }]), [{ topic: 'a', partition: 0, offset: 5n }]);
  assert.equal(usage.offsetsToCommit([{ topic: 'a', partition: 0, offset: 5n, leaderEpoch: 3, metadata: 'm' }]), [{ topic: 'a', partition: 0, offset: 5n, leaderEpoch: 3, metadata: 'm' }]);
  const tp = { topic: 'a', partition: 1 };
  assert.equal(
    usage.offsetsToCommit(
      new Map<unknown, unknown>([
        [tp, 7n],
        [
          { topic: 'b', partition: 0 },
          { offset: 9, metadata: null },
        ],
      ]),
    ),
    [
      { topic: 'a', partition: 1, offset: 7n },
      { topic: 'b', partition: 0, offset: 9n, metadata: null },
    ],
  );
  refuses(() => usage.offsetsToCommit([{ topic: 'a', partition: 0, offset: '43' }]), /commitSync\(\): .*the offset "43" is a string \(kafkajs's offsets are\): give 43n/);
  refuses(() => usage.offsetsToCommit([{ topic: 'a', partition: 0 }]), /has no offset: give the next offset to read \(the last processed \+ 1\)/);
  refuses(() => usage.offsetsToCommit([{ topic: 'a', partition: 0, offset: 1n, metdata: 'x' }]), /unknown option "metdata": did you mean metadata\?/);
  refuses(() => usage.offsetsToCommit([{ topic: 'a', partition: 0, offset: 1n, leaderEpoch: -2 }]), /leaderEpoch must be an integer from -1/);
  refuses(() => usage.offsetsToCommit([{ topic: 'a', partition: 0, offset: 1n, metadata: 5 }]), /metadata must be a string or null/);
  refuses(
    () =>
      usage.offsetsToCommit([
        { topic: 'a', partition: 0, offset: 1n },
        { topic: 'a', partition: 0, offset: 2n },
      ]),
    /a-0 is given twice/,
  );
  refuses(() => usage.offsetsToCommit(new Map([['a', 1n]])), /a Map's key/, /is not a partition/);
  refuses(() => usage.offsetsToCommit(() => {}, 'commitAsync()'), /commitAsync\(undefined, callback\)/);
  refuses(() => usage.offsetsToCommit({ topic: 'a', partition: 0, offset: 1n }), /takes a list of \{ topic, partition, offset \}, not one/);
});

test('offsetsForTimes(): a Map or a list of { topic, partition, timestamp }, keyed by the objects given', () => {
  const tp = { topic: 'a', partition: 0 };
  const fromMap = usage.timesToLookUp(new Map([[tp, 5]]));
  assert.is(fromMap[0]!.tp, tp);
  assert.is(fromMap[0]!.timestamp, 5n);
  const item = { topic: 'a', partition: 1, timestamp: 6n };
  const fromList = usage.timesToLookUp([item]);
  assert.is(fromList[0]!.tp, item, "the list's item is the key");
  assert.is(fromList[0]!.timestamp, 6n);
  refuses(() => usage.timesToLookUp([{ topic: 'a', partition: 0 }]), /has no timestamp: give \{ topic, partition, timestamp \}/);
  refuses(() => usage.timesToLookUp([{ topic: 'a', partition: 0, time: 5 }]), /unknown option "time"/);
  refuses(() => usage.timesToLookUp([{ topic: 'a', partition: 0, timestamp: new Date() }]), /give date\.getTime\(\)/);
  refuses(() => usage.timesToLookUp(new Map([[tp, -5]])), /timestamp -5 is not a non-negative integer/);
  refuses(() => usage.timesToLookUp('a'), /takes a Map from \{ topic, partition \} to a time, or a list of \{ topic, partition, timestamp \}, not "a"/);
  refuses(() => usage.timesToLookUp({ topic: 'a', partition: 0, timestamp: 1 }), /or a list of/);
  assert.is(usage.timeoutOption(undefined, 'x()'), undefined);
  assert.is(usage.timeoutOption({ timeoutMs: 50 }, 'x()'), 50);
  assert.is(usage.timeoutOption({}, 'x()'), undefined);
  refuses(() => usage.timeoutOption(5000, 'endOffsets()'), /endOffsets\(\): give the timeout as \{ timeoutMs: 5000 \}/);
  refuses(() => usage.timeoutOption({ timeout: 5 }, 'x()'), /unknown option "timeout": did you mean timeoutMs\?/);
  refuses(() => usage.timeoutOption({ timeoutMs: -1 }, 'x()'), /timeoutMs must be an integer number of milliseconds from 0/);
});

test('streams(), partitionsFor(), seek()', () => {
  assert.equal(usage.streamCounts({ a: 2, b: 1 }), [
    ['a', 2],
    ['b', 1],
  ]);
  assert.equal(usage.streamCounts(new Map([['a', 3]])), [['a', 3]]);
  refuses(() => usage.streamCounts({ a: 0 }), /streams\(\): a wants 0 streams: give an integer from 1 to 1024/);
  refuses(() => usage.streamCounts({ a: '2' }), /wants "2" streams/);
  refuses(() => usage.streamCounts('a'), /streams\(\) takes \{ topic: N \}, not a topic name: streams\(\{ "a": 3 \}\)/);
  refuses(() => usage.streamCounts(['a']), /streams\(\) takes \{ topic: N \}/);
  refuses(() => usage.streamCounts({}), /names no topic/);
  assert.is(usage.topicArgument('a', 'partitionsFor()'), 'a');
  refuses(() => usage.topicArgument({ topic: 'a' }, 'partitionsFor()'), /partitionsFor\(\) takes the topic's name, partitionsFor\("a"\)/);
  refuses(() => usage.topicArgument('', 'partitionsFor()'), /topic must be a non-empty string/);
  const tp = { topic: 'a', partition: 0 };
  const s = usage.seekArguments(tp, 5);
  assert.is(s.tp, tp);
  assert.is(s.target, 5n);
  refuses(
    () => usage.seekArguments({ topic: 'a', partition: 0, offset: '12' }, undefined),
    /seek\(\) takes \(partition, offset\): seek\(\{ topic, partition \}, 12n\), not kafkajs's seek\(\{ topic, partition, offset \}\)/,
  );
  refuses(() => usage.seekArguments(tp, undefined), /seek\(\) needs where to go/);
  refuses(() => usage.seekArguments(tp, '12'), /seek\(\): a-0: the offset "12" is a string/);
});

test('run(): exactly one handler, known options, kafkajs options named', () => {
  const each = async () => {};
  usage.checkRunOptions({ eachMessage: each });
  usage.checkRunOptions({ eachBatch: each, eachBatchAutoResolve: false, onFailure: 'stop' });
  usage.checkRunOptions({ eachMessage: each, onFailure: () => 'retry' as const });
  refuses(
    () => usage.checkRunOptions({ eachMessage: each, partitionsConsumedConcurrently: 3 }),
    /run\(\): partitionsConsumedConcurrently is kafkajs's run\(\) option: give run\(\{ maxConcurrency: N, ordering: 'partition' \}\)/,
  );
  refuses(() => usage.checkRunOptions({ eachMessage: each, autoCommit: false }), /run\(\): autoCommit is kafkajs's run\(\) option: set enableAutoCommit: false/);
  refuses(() => usage.checkRunOptions({ eachMessage: each, autoCommitInterval: 1000 }), /autoCommitIntervalMs \(auto\.commit\.interval\.ms\)/);
  refuses(() => usage.checkRunOptions({ eachMessage: each, autoCommitThreshold: 100 }), /kwire has no commit threshold/);
  refuses(() => usage.checkRunOptions({ eachMessage: each, restartOnFailure: async () => true }), /onFailure/);
  refuses(() => usage.checkRunOptions({ eachMesage: each }), /unknown option "eachMesage": did you mean eachMessage\?/);
  refuses(() => usage.checkRunOptions({ eachMessage: each, maxPollRecords: 10 }), /maxPollRecords is a configuration option: give it to createConsumer\(\)/);
  refuses(
    () => usage.checkRunOptions({ eachMessage: each, foo: 1 }),
    /unknown option "foo" \(it takes eachBatch, eachMessage, eachBatchAutoResolve, onFailure, maxConcurrency, ordering, onSkip, worker\)/,
  );
  // The concurrency options.
  usage.checkRunOptions({ eachMessage: each, maxConcurrency: 256, ordering: 'key', onFailure: 'skip', onSkip: () => {} });
  refuses(() => usage.checkRunOptions({ eachMessage: each, maxConcurrency: 0 }), /maxConcurrency must be an integer from 1 to 1000000 \(records in flight at once\), not 0/);
  refuses(() => usage.checkRunOptions({ eachMessage: each, maxConcurrency: '64' }), /maxConcurrency must be an integer/);
  refuses(() => usage.checkRunOptions({ eachMessage: each, ordering: 'keys' }), /ordering must be 'key', 'partition' or 'unordered', not "keys": did you mean 'key'\?/);
  refuses(() => usage.checkRunOptions({ eachBatch: each, ordering: 'key' }), /ordering is for eachMessage/);
  refuses(() => usage.checkRunOptions({ eachBatch: each, onFailure: 'skip' }), /onFailure 'skip' is for eachMessage/);
  refuses(() => usage.checkRunOptions({ eachMessage: each, onSkip: 'dlq' }), /onSkip must be a function/);
  refuses(() => usage.checkRunOptions({ eachMessage: each, onFailure: 'ignore' }), /did you mean 'skip'\?/);
  refuses(() => usage.checkRunOptions({}), /run\(\) needs exactly one of eachBatch and eachMessage: run\(\{ eachMessage: async/);
  refuses(() => usage.checkRunOptions({ eachMessage: each, eachBatch: each }), /not both/);
  refuses(() => usage.checkRunOptions({ eachMessage: 'handle' }), /eachMessage must be a function, not "handle"/);
  refuses(() => usage.checkRunOptions({ eachBatch: {} }), /eachBatch must be a function/);
  refuses(() => usage.checkRunOptions({ eachBatch: each, eachBatchAutoResolve: 'no' }), /eachBatchAutoResolve must be true or false, not "no"/);
  refuses(() => usage.checkRunOptions({ eachMessage: each, eachBatchAutoResolve: false }), /eachBatchAutoResolve is for eachBatch/);
  refuses(() => usage.checkRunOptions({ eachMessage: each, onFailure: 'restart' }), /onFailure must be 'retry', 'stop', 'skip' or a function .*not "restart": did you mean 'retry'\?/);
  refuses(() => usage.checkRunOptions({ eachMessage: each, onFailure: 'stpo' }), /did you mean 'stop'\?/);
  refuses(() => usage.checkRunOptions(undefined), /run\(\) takes \{ eachMessage \} or \{ eachBatch \}, not undefined/);
  refuses(() => usage.checkRunOptions(each), /not a function: run\(\{ eachMessage: yourFunction \}\)/);
});

test('values are shown short, bigints with n, functions as such', () => {
  assert.is(usage.shown(5n), '5n');
  assert.is(usage.shown({ offset: 5n }), '{"offset":"5n"}');
  assert.is(
    usage.shown(() => 1),
    'a function',
  );
  assert.is(usage.shown(/a/g), '/a/g');
  assert.is(usage.shown(new Map([[1, 2]])), 'a Map of 1');
  assert.ok(usage.shown({ long: 'x'.repeat(500) }).length <= 100);
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.is(usage.shown(cyclic), 'an object');
});

test.run();
