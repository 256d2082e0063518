/** The key of a partition in the consumer's maps and sets: one spelling for all of them. */
export function tpKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}
