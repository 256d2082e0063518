// The commit point of a partition (DeliveryLedger): the end of the contiguous run of finished
// records, whatever order batches are released in, partly processed, or given back.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DeliveryLedger } from '../../src/state/delivery-ledger.js';

function ledgerAt(offset: bigint): DeliveryLedger {
  const l = new DeliveryLedger();
  l.restart(offset);
  return l;
}

test('batches finished in order move the commit point over each', () => {
  const l = ledgerAt(0n);
  const a = l.delivered(0n, 500n, 3);
  const b = l.delivered(500n, 1000n, 3);
  assert.is(l.commitPoint, 0n);
  l.finished(a);
  assert.is(l.commitPoint, 500n);
  l.finished(b);
  assert.is(l.commitPoint, 1000n);
  assert.is(l.commitPointEpoch, 3);
  assert.is(l.openDeliveries, 0);
});

test('a later batch finished while an earlier one is held does not move the point until the earlier one is', () => {
  const l = ledgerAt(0n);
  const a = l.delivered(0n, 500n, 1);
  const b = l.delivered(500n, 1000n, 1);
  const c = l.delivered(1000n, 1500n, 1);
  l.finished(b);
  l.finished(c);
  assert.is(l.commitPoint, 0n, 'the retained first batch holds the point');
  l.finished(a);
  assert.is(l.commitPoint, 1500n);
});

test('partial progress of the head delivery moves the point inside it; of a later one, not before the head settles', () => {
  const l = ledgerAt(10n);
  const a = l.delivered(10n, 20n, 0);
  const b = l.delivered(20n, 30n, 0);
  l.progressed(b, 25n);
  assert.is(l.commitPoint, 10n);
  l.progressed(a, 15n);
  assert.is(l.commitPoint, 15n);
  l.progressed(a, 12n);
  assert.is(l.commitPoint, 15n, 'progress never goes back');
  l.finished(a);
  assert.is(l.commitPoint, 25n, 'then up to what the later one had finished');
  l.progressed(b, 99n);
  assert.is(l.commitPoint, 30n, 'progress is capped at the end of its delivery');
});

test('a delivery given back stops the point at its first unfinished record and drops the later ones', () => {
  const l = ledgerAt(0n);
  const a = l.delivered(0n, 500n, 2);
  const b = l.delivered(500n, 1000n, 2);
  l.progressed(a, 3n);
  assert.is(l.abandoned(a), 3n, 'delivered again from offset 3');
  assert.is(l.commitPoint, 3n);
  assert.ok(b.dropped, 'the later delivery is dropped: its records come again');
  l.finished(b);
  assert.is(l.commitPoint, 3n, 'finishing a dropped delivery moves nothing');
  const again = l.delivered(3n, 500n, 2);
  l.finished(again);
  assert.is(l.commitPoint, 500n);
});

test('a delivery given back behind a held one: the point waits for the held one, then stops at the give-back', () => {
  const l = ledgerAt(0n);
  const held = l.delivered(0n, 100n, 0);
  const failed = l.delivered(100n, 200n, 0);
  l.progressed(failed, 150n);
  assert.is(l.abandoned(failed), 150n);
  assert.is(l.commitPoint, 0n);
  l.finished(held);
  assert.is(l.commitPoint, 150n);
});

test('giving back a fully finished delivery redelivers nothing', () => {
  const l = ledgerAt(0n);
  const a = l.delivered(0n, 10n, 0);
  l.progressed(a, 10n);
  assert.is(l.abandoned(a), null);
  assert.is(l.commitPoint, 10n);
});

test('skipped offsets (control records) are finished once everything before them is', () => {
  const l = ledgerAt(0n);
  l.skipped(0n, 1n);
  assert.is(l.commitPoint, 1n, 'nothing held: at once');
  const a = l.delivered(1n, 10n, 0);
  l.skipped(10n, 11n);
  assert.is(l.commitPoint, 1n);
  l.finished(a);
  assert.is(l.commitPoint, 11n);
});

test('restart (a seek) drops every open delivery and sets the point', () => {
  const l = ledgerAt(0n);
  const a = l.delivered(0n, 10n, 0);
  l.restart(500n, 7);
  assert.is(l.commitPoint, 500n);
  assert.is(l.commitPointEpoch, 7);
  l.finished(a);
  assert.is(l.commitPoint, 500n);
  assert.is(l.abandoned(a), null);
});

test('a random schedule of finishes, partial marks and give-backs never passes an unfinished record', () => {
  // Model: a set of finished offsets; the point must equal the first unfinished offset at or after
  // the start, given that give-backs redeliver from their first unfinished offset.
  let seed = 12345;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let round = 0; round < 200; round++) {
    const l = ledgerAt(0n);
    const done = new Set<number>();
    let position = 0;
    const open: { d: ReturnType<DeliveryLedger['delivered']>; from: number; to: number; marked: number }[] = [];
    for (let step = 0; step < 60 && position < 400; step++) {
      const action = rand(4);
      if (action === 0 || open.length === 0) {
        const size = 1 + rand(20);
        const d = l.delivered(BigInt(position), BigInt(position + size), 0);
        open.push({ d, from: position, to: position + size, marked: position });
        position += size;
        continue;
      }
      const i = rand(open.length);
      const o = open[i]!;
      if (action === 1) {
        l.finished(o.d);
        if (!o.d.dropped) for (let k = o.marked; k < o.to; k++) done.add(k);
        open.splice(i, 1);
      } else if (action === 2) {
        const to = o.marked + rand(o.to - o.marked + 1);
        l.progressed(o.d, BigInt(to));
        if (!o.d.dropped) for (let k = o.marked; k < to; k++) done.add(k);
        o.marked = Math.max(o.marked, to);
      } else {
        const wasDropped = o.d.dropped;
        const from = l.abandoned(o.d);
        if (!wasDropped && from !== null) {
          assert.is(Number(from), o.marked);
          // Later deliveries are dropped; redelivery starts at `from`.
          for (const later of open.filter((x) => x.from > o.from)) open.splice(open.indexOf(later), 1);
          position = Number(from);
        }
        open.splice(open.indexOf(o), 1);
      }
      let first = 0;
      while (done.has(first)) first++;
      assert.ok(Number(l.commitPoint) <= first, `round ${round} step ${step}: point ${l.commitPoint} passes unfinished offset ${first}`);
    }
  }
});

test("progress counted lazily (run()'s eachMessage) is in the commit point whenever it is read, in delivery order", () => {
  const l = ledgerAt(0n);
  const a = l.delivered(0n, 100n, 1);
  const b = l.delivered(100n, 200n, 1);
  // What each batch counted finished so far, reported as an offset when asked.
  const counted = new Map([
    [a, 0n],
    [b, 0n],
  ]);
  const lazy = (d: typeof a) => ({ flushProgress: () => l.progressed(d, counted.get(d)!) });
  l.progressLater(a, lazy(a));
  l.progressLater(b, lazy(b));
  counted.set(b, 150n);
  assert.is(l.commitPoint, 0n, 'b is ahead of a: nothing moves');
  counted.set(a, 40n);
  assert.is(l.commitPoint, 40n, 'a counted 40 records: the point is there without any call but the read');
  counted.set(a, 100n);
  l.finished(a);
  assert.is(l.commitPoint, 150n, "a finished: b's counted progress follows");
  assert.is(l.abandoned(b), 150n, 'given back: delivered again from the first record not counted');
});

test.run();
