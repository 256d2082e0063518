import { ensureKafka } from './distribution.js';
import { startKafka, type KafkaCluster, type StartKafkaOptions } from './broker.js';
import type { KafkaTarget } from './tools.js';

export interface TestKafka extends KafkaTarget {
  /** The cluster, when this call started one (not when KWIRE_BOOTSTRAP points elsewhere). */
  readonly cluster: KafkaCluster | undefined;
  /** Stops the cluster if this call started it; a no-op for an existing broker. */
  release(): Promise<void>;
}

/**
 * The broker an integration test talks to. With KWIRE_BOOTSTRAP=host:port set, that broker (the
 * test command sets it to the one it started for the whole run, and a developer can point it at
 * theirs); otherwise a fresh single node for this test file. Tests that need something special
 * (three nodes, SASL, TLS, another version) pass options and always get a cluster of their own.
 */
export async function useKafka(options: StartKafkaOptions = {}): Promise<TestKafka> {
  const special = options.nodes === 3 || options.sasl || options.ssl || options.version !== undefined || options.config !== undefined || options.nodeConfig !== undefined;
  const external = process.env.KWIRE_BOOTSTRAP;
  if (external && !special) {
    const dist = await ensureKafka(undefined, { log: options.log });
    return { bootstrap: external, dist, cluster: undefined, release: async () => {} };
  }
  const cluster = await startKafka(options);
  return { bootstrap: cluster.bootstrap, dist: cluster.dist, cluster, release: () => cluster.stop() };
}
