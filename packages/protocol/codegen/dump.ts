// Runs DumpKafka.java against a Kafka release's jars (resolved by the launcher from Maven Central).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileJava, ensureKafka, runTool } from '@kwire/broker';
import type { KafkaDump } from './generate.js';

/** packages/protocol */
export const protocolDir = join(dirname(fileURLToPath(import.meta.url)), '../..');

export async function dumpKafka(version?: string, log?: (line: string) => void): Promise<KafkaDump> {
  const dist = await ensureKafka(version, { log });
  const helper = await compileJava(join(protocolDir, 'codegen/DumpKafka.java'), { classpath: dist.classpath, log });
  const result = await runTool(dist, 'DumpKafka', [], { extraClasspath: [helper], label: 'DumpKafka', heapMb: 256 });
  if (result.code !== 0) throw new Error(`DumpKafka failed (exit ${String(result.code)}):\n${result.stderr}`);
  return JSON.parse(result.stdout) as KafkaDump;
}
