/**
 * `items` in lists by `keyOf` (requests are built per topic, per leader, per error): each list in
 * the items' order, the keys in the order first seen. Off the record path: per request, not per
 * record.
 */
export function groupBy<T, K, V = T>(items: Iterable<T>, keyOf: (item: T) => K, pick?: (item: T) => V): Map<K, V[]> {
  const groups = new Map<K, V[]>();
  for (const item of items) {
    const key = keyOf(item);
    let list = groups.get(key);
    if (!list) groups.set(key, (list = []));
    list.push(pick ? pick(item) : (item as unknown as V));
  }
  return groups;
}
