// Steps the scenario scripts share: start a consumer, record what handlers are given, consume a
// known number of records and stop. Written against kafkajs's API only.
import type { Consumer, ConsumerRunConfig, ConsumerSubscribeTopic, ConsumerSubscribeTopics, EachBatchPayload, EachMessagePayload } from 'kafkajs';
import { type Ctx, shape, typeOf } from './harness.js';

/** listen, connect, subscribe, run: the usual opening of a kafkajs program. */
export async function start(ctx: Ctx, c: Consumer, subscription: ConsumerSubscribeTopics | ConsumerSubscribeTopic, run: ConsumerRunConfig): Promise<void> {
  ctx.listen(c);
  await c.connect();
  await c.subscribe(subscription);
  await c.run(run);
}

/**
 * Runs (scenario runs) whose payload shapes were noted: once per run, not per consumer, so that which
 * member of a group got records first is not part of the trace (allowed-differences.md, members).
 */
const shapedMessages = new WeakSet<Ctx>();
const shapedBatches = new WeakSet<Ctx>();

/** An eachMessage that records every delivery, notes the payload's shape once, then calls `then`. */
export function recording(ctx: Ctx, then?: (p: EachMessagePayload) => Promise<void> | void): (p: EachMessagePayload) => Promise<void> {
  return async (p) => {
    if (!shapedMessages.has(ctx)) {
      shapedMessages.add(ctx);
      ctx.note(`eachMessage payload {${shape(p)}}`);
      ctx.note(`message {${shape(p.message)}}`);
    }
    ctx.record(p.topic, p.partition, p.message);
    await then?.(p);
  };
}

/** An eachBatch that records every message of each batch, notes the payload's shape once, then calls `then`. */
export function recordingBatches(ctx: Ctx, then?: (p: EachBatchPayload) => Promise<void> | void): (p: EachBatchPayload) => Promise<void> {
  return async (p) => {
    if (!shapedBatches.has(ctx)) {
      shapedBatches.add(ctx);
      ctx.note(`eachBatch payload {${shape(p)}}`);
      // The fields and methods types/index.d.ts declares (kafkajs's Batch has undeclared internals too).
      const declared = ['topic', 'partition', 'highWatermark', 'messages', 'isEmpty', 'firstOffset', 'lastOffset', 'offsetLag', 'offsetLagLow'];
      ctx.note(`batch ${declared.map((k) => `${k}:${typeOf((p.batch as unknown as Record<string, unknown>)[k])}`).join(',')}`);
      ctx.note(
        `batch methods firstOffset:${typeof p.batch.firstOffset()} lastOffset:${typeof p.batch.lastOffset()} offsetLag:${typeof p.batch.offsetLag()} offsetLagLow:${typeof p.batch.offsetLagLow()} isEmpty:${String(p.batch.isEmpty())}`,
      );
    }
    for (const m of p.batch.messages) ctx.record(p.batch.topic, p.batch.partition, m);
    await then?.(p);
  };
}

/** Runs `config` until `n` deliveries were seen, then disconnects (from outside any handler). */
export async function consume(ctx: Ctx, c: Consumer, subscription: ConsumerSubscribeTopics | ConsumerSubscribeTopic, config: ConsumerRunConfig, n: number): Promise<void> {
  await start(ctx, c, subscription, config);
  await ctx.until(`${n} deliveries`, () => ctx.delivered() >= n);
  await c.disconnect();
}

/** Produces `n` numbered records to each partition of topic `t` (one send per partition). */
export async function fill(ctx: Ctx, t: number, partitions: number, n: number, from = 0): Promise<void> {
  for (let p = 0; p < partitions; p++) await ctx.produce(t, p, ctx.numbered(n, from));
}
