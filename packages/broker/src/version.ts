/**
 * The Kafka release the launcher runs unless told otherwise: the newest 4.x that resolves from
 * Maven Central with all its dependencies (checked 2026-11). KWIRE_KAFKA_VERSION overrides it, so a
 * whole test run can target 3.9.x or 4.1.x.
 */
export const NEWEST_KAFKA_VERSION = '4.4.0';

export function defaultKafkaVersion(): string {
  return process.env.KWIRE_KAFKA_VERSION || NEWEST_KAFKA_VERSION;
}

export interface KafkaVersion {
  readonly text: string;
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}

export function parseKafkaVersion(text: string): KafkaVersion {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (!m) throw new Error(`not a Kafka release version: ${JSON.stringify(text)} (expected e.g. 4.4.0)`);
  return { text, major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
}

export function atLeast(v: KafkaVersion, major: number, minor: number): boolean {
  return v.major > major || (v.major === major && v.minor >= minor);
}
