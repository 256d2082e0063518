// @kwire/testkit: what the tests of @kwire/consumer and @kwire/tools share (private, never
// published, a devDependency only). See the README for what each export is for.
export { FakeBroker, allApiVersions, apiVersionsUpTo, fakeBrokers, metadataBody, writePieces, type FakeBrokerOptions, type FakeRequest, type Handler, type Reply } from './fake-broker.js';
export { FakeCluster, type FakePartition } from './fake-cluster.js';
export { FaultProxy, type ProxyFault } from './fault-proxy.js';
export { kafkaSuite, type Closable, type KafkaSuite, type KafkaSuiteOptions } from './suite.js';
export { TestProducer, produceContinuously, type ProduceOptions } from './producer.js';
export { within, until, settlesWithin } from './waits.js';
export { capturingLogger } from './logger.js';
export { rejection } from './checks.js';
export { prng } from './random.js';
