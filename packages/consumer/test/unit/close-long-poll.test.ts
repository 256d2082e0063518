// close() does not wait for a long poll: the fetch connections are cut at once (their answers are
// of no use after close()), without a warning, while the group's connection still closes in order.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createConsumer } from '../../src/index.js';
import { capturingLogger, FakeCluster, until } from '@kwire/testkit';

test('close() with a Fetch parked on a long poll returns without waiting for it, silently', async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 1);
  cluster.append('t', 0, 3, () => 'k');
  const { logger, lines } = capturingLogger();
  const c = createConsumer({ bootstrapServers: cluster.bootstrap, groupId: 'g', autoOffsetReset: 'earliest', fetchMaxWaitMs: 20_000, logger });
  try {
    await c.subscribe({ topics: ['t'] });
    let n = 0;
    const running = c.run({ eachMessage: async () => void n++ });
    await until('the three records handled', () => n === 3, 10_000, 20);
    // The next Fetch finds nothing and waits on the broker (the fake cluster holds it up to 2 s).
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    const result = await c.close();
    const took = Date.now() - started;
    // Before, the pool waited for the parked Fetch's answer (1.7 s here; up to fetch.max.wait.ms
    // or 5 s against a broker); cut, close() took 6 ms.
    assert.ok(took < 1_000, `close() took ${took} ms`);
    assert.is(result.timedOut, false);
    await running;
    assert.equal(
      lines.filter((l) => l.startsWith('warn') || l.startsWith('error')),
      [],
    );
  } finally {
    await c.close();
    await cluster.stop();
  }
});

test.run();
