// A service's heap for the benchmark's Node clients (--heap-mib): objects that stay alive for the
// whole run, as an application's caches, sessions and loaded modules do. A full collection marks
// every live object, so what a client's memory rule costs in a service (recordBuffers 'owned',
// kafkajs's fresh memory per answer: a full collection per 64 MiB of new ArrayBuffers) shows only
// when the heap holds what a service's does, not the few MiB of a process that only consumes.
import { getHeapStatistics } from 'node:v8';

const MIB = 1_048_576;

/** One entry of the held heap: a record of a service's cache (strings, numbers, an array, a child). */
interface Entry {
  id: number;
  key: string;
  tags: string[];
  child: { seen: number; owner: Entry | null };
}

const held: Entry[] = [];

/**
 * Keeps at least `mib` MiB of live objects on the JS heap until the process ends (V8's used heap
 * grows by that much) and returns how many MiB it grew by.
 */
export function holdHeap(mib: number): number {
  if (!Number.isInteger(mib) || mib < 1) throw new RangeError(`heap MiB must be a positive integer, got ${mib}`);
  const start = getHeapStatistics().used_heap_size;
  const goal = start + mib * MIB;
  let grown = start;
  for (let i = held.length; grown < goal; i++) {
    const previous = held.length > 0 ? held[held.length - 1]! : null;
    held.push({ id: i, key: `entry-${i}`, tags: [`t${i % 97}`, `g${i}`], child: { seen: i * 2, owner: previous } });
    if (i % 4096 === 0) grown = getHeapStatistics().used_heap_size;
  }
  return Math.round((getHeapStatistics().used_heap_size - start) / MIB);
}

/** Entries held so far (for tests). */
export function heldEntries(): number {
  return held.length;
}
