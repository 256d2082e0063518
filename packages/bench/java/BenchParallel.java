// The handler-bound family's Java peer (issue 31), compiled by the launcher's compileJava against
// Confluent's parallel-consumer and its runtime dependencies, its own kafka-clients 3.7.0 among them
// (orchestrator/parallel-consumer.ts says why not the broker's). The family's topic is loaded by
// HandlerTopic.java.
//
//   parallel --bootstrap B --topic T --ends e0,e1,... --records N --keys K --concurrency C
//            --order KEY|PARTITION|UNORDERED --sleep-ms MS --time-limit-s L --group G
//     Confluent's parallel-consumer as its users write an I/O-bound handler: a KafkaConsumer
//     (auto-commit off, as it requires) in a ParallelStreamProcessor with the given ProcessingOrder
//     and maxConcurrency, and a poll() callback that sleeps MS ms in its pool thread. Stops once N
//     distinct records were handled, or L seconds after the first one started. Prints one JSON
//     line with the same figures as the Node clients (clients/handler-check.ts): records handled,
//     first start to last end, per-key order violations, duplicates, handler and end-to-end p99.
import io.confluent.parallelconsumer.ParallelConsumerOptions;
import io.confluent.parallelconsumer.ParallelConsumerOptions.ProcessingOrder;
import io.confluent.parallelconsumer.ParallelStreamProcessor;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class BenchParallel {
  public static void main(String[] argv) throws Exception {
    // slf4j-simple (the pom's binding): warnings and errors only, before any logger exists.
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    Map<String, String> a = new HashMap<>();
    for (int i = 1; i + 1 < argv.length; i += 2) a.put(argv[i].substring(2), argv[i + 1]);
    if (!argv[0].equals("parallel")) throw new IllegalArgumentException("usage: parallel --bootstrap B --topic T ...");
    parallel(a);
  }

  /** What the handler saw, by record (partition's base + offset); times on System.nanoTime(). */
  static final class Seen {
    final long[] base;
    final long[] startNs;
    final long[] endNs;
    final long[] timestampMs;
    final int[] key;
    final int[] seq;
    final AtomicInteger[] starts;

    Seen(long[] ends) {
      base = new long[ends.length + 1];
      for (int p = 0; p < ends.length; p++) base[p + 1] = base[p] + ends[p];
      int total = (int) base[ends.length];
      startNs = new long[total];
      endNs = new long[total];
      timestampMs = new long[total];
      key = new int[total];
      seq = new int[total];
      starts = new AtomicInteger[total];
      for (int i = 0; i < total; i++) starts[i] = new AtomicInteger();
    }
  }

  static void parallel(Map<String, String> a) throws Exception {
    String topic = a.get("topic");
    long[] ends = Arrays.stream(a.get("ends").split(",")).mapToLong(Long::parseLong).toArray();
    int target = Integer.parseInt(a.get("records"));
    int keys = Integer.parseInt(a.get("keys"));
    int concurrency = Integer.parseInt(a.get("concurrency"));
    long sleepMs = Long.parseLong(a.getOrDefault("sleep-ms", "5"));
    long limitNs = (long) (Double.parseDouble(a.getOrDefault("time-limit-s", "30")) * 1e9);
    ProcessingOrder order = ProcessingOrder.valueOf(a.getOrDefault("order", "KEY"));
    Seen seen = new Seen(ends);
    AtomicInteger handled = new AtomicInteger();
    AtomicInteger duplicates = new AtomicInteger();
    AtomicLong firstStart = new AtomicLong(Long.MAX_VALUE);
    AtomicLong lastEnd = new AtomicLong(0);
    AtomicInteger badKeys = new AtomicInteger();
    Object done = new Object();
    AtomicBoolean stopped = new AtomicBoolean();
    // Wall clock = nanoTime + this, for end-to-end times against CreateTime (epoch ms).
    long wallOffsetNs = System.currentTimeMillis() * 1_000_000L - System.nanoTime();

    Properties p = new Properties();
    p.put("bootstrap.servers", a.get("bootstrap"));
    p.put("group.id", a.get("group"));
    p.put("enable.auto.commit", "false");
    p.put("auto.offset.reset", "earliest");
    p.put("key.deserializer", ByteArrayDeserializer.class.getName());
    p.put("value.deserializer", ByteArrayDeserializer.class.getName());
    KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
    ParallelConsumerOptions<byte[], byte[]> options =
        ParallelConsumerOptions.<byte[], byte[]>builder()
            .consumer(consumer)
            .ordering(order)
            .maxConcurrency(concurrency)
            .build();
    ParallelStreamProcessor<byte[], byte[]> pc = ParallelStreamProcessor.createEosStreamProcessor(options);
    long cpu0 = processCpuNs();
    long gc0 = gcMs();
    pc.subscribe(List.of(topic));
    pc.poll(ctx -> {
      ConsumerRecord<byte[], byte[]> r = ctx.getSingleConsumerRecord();
      long t0 = System.nanoTime();
      int i = (int) (seen.base[r.partition()] + r.offset());
      boolean first = seen.starts[i].getAndIncrement() == 0;
      if (!first) duplicates.incrementAndGet();
      else {
        firstStart.accumulateAndGet(t0, Math::min);
        seen.startNs[i] = t0;
        seen.timestampMs[i] = r.timestamp();
        parseKey(r, seen, i, keys, badKeys);
      }
      try {
        Thread.sleep(sleepMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      if (!first) return;
      long t1 = System.nanoTime();
      seen.endNs[i] = t1;
      // Exactly `target` records count: those ending after the last one (or after the stop) do not.
      int h;
      do {
        h = handled.get();
        if (h >= target || stopped.get()) return;
      } while (!handled.compareAndSet(h, h + 1));
      lastEnd.accumulateAndGet(t1, Math::max);
      if (h + 1 == target) {
        synchronized (done) {
          done.notifyAll();
        }
      }
    });
    boolean capped = false;
    synchronized (done) {
      while (handled.get() < target) {
        long f = firstStart.get();
        if (f != Long.MAX_VALUE && System.nanoTime() - f >= limitNs) {
          capped = true;
          break;
        }
        done.wait(50);
      }
    }
    stopped.set(true);
    long stopNs = System.nanoTime();
    int count = handled.get();
    long last = lastEnd.get();
    long cpuNs = processCpuNs() - cpu0;
    long gc = gcMs() - gc0;
    // Records whose handler had not ended by now count as unfinished (end = +infinity below).
    pc.closeDontDrainFirst(Duration.ofSeconds(10));

    // Per key, by start time: each record must start after its key's previous one ended and carry
    // a higher seq (one at a time, in offset order). The same rule as clients/handler-check.ts.
    int total = seen.startNs.length;
    List<List<Integer>> byKey = new ArrayList<>();
    for (int k = 0; k < keys; k++) byKey.add(new ArrayList<>());
    long[] handlerNs = new long[total];
    long[] e2eNs = new long[total];
    int nh = 0;
    for (int i = 0; i < total; i++) {
      if (seen.starts[i].get() == 0 || seen.startNs[i] > stopNs) continue;
      byKey.get(seen.key[i]).add(i);
      long end = seen.endNs[i];
      if (end != 0 && end <= stopNs) {
        handlerNs[nh] = end - seen.startNs[i];
        e2eNs[nh] = end + wallOffsetNs - seen.timestampMs[i] * 1_000_000L;
        nh++;
      }
    }
    int outOfOrder = 0;
    int overlaps = 0;
    for (List<Integer> list : byKey) {
      list.sort((x, y) -> Long.compare(seen.startNs[x], seen.startNs[y]));
      for (int j = 1; j < list.size(); j++) {
        int prev = list.get(j - 1);
        int cur = list.get(j);
        long prevEnd = seen.endNs[prev] == 0 ? Long.MAX_VALUE : seen.endNs[prev];
        if (seen.seq[cur] < seen.seq[prev]) outOfOrder++;
        else if (seen.startNs[cur] < prevEnd) overlaps++;
      }
    }
    long f = firstStart.get();
    double seconds = f == Long.MAX_VALUE ? 0 : (last - f) / 1e9;
    StringBuilder out = new StringBuilder("{\"handler\":{");
    out.append("\"records\":").append(count);
    out.append(",\"seconds\":").append(seconds);
    out.append(",\"capped\":").append(capped);
    out.append(",\"outOfOrder\":").append(outOfOrder);
    out.append(",\"overlaps\":").append(overlaps);
    out.append(",\"duplicates\":").append(duplicates.get());
    out.append(",\"badKeys\":").append(badKeys.get());
    out.append(",\"handlerP50Ms\":").append(percentileMs(handlerNs, nh, 50));
    out.append(",\"handlerP99Ms\":").append(percentileMs(handlerNs, nh, 99));
    out.append(",\"e2eP50Ms\":").append(percentileMs(e2eNs, nh, 50));
    out.append(",\"e2eP99Ms\":").append(percentileMs(e2eNs, nh, 99));
    out.append(",\"cpuSeconds\":").append(cpuNs / 1e9);
    out.append(",\"gcMs\":").append(gc);
    out.append(",\"threads\":").append(Thread.activeCount());
    out.append("}}");
    System.out.println(out);
    System.out.flush();
    // The pool threads of a closed processor are not daemons on every path: end here.
    System.exit(0);
  }

  /** Reads "key-NNNN|seq|" from the value and checks that the record's key is that key. */
  static void parseKey(ConsumerRecord<byte[], byte[]> r, Seen seen, int i, int keys, AtomicInteger badKeys) {
    byte[] v = r.value();
    int k = 0;
    int j = 4;
    while (j < v.length && v[j] != '|') k = k * 10 + (v[j++] - '0');
    int s = 0;
    j++;
    while (j < v.length && v[j] != '|') s = s * 10 + (v[j++] - '0');
    byte[] key = r.key();
    boolean same = key != null && key.length == 8;
    for (int b = 0; same && b < 8; b++) same = key[b] == v[b];
    if (!same || k < 0 || k >= keys) {
      badKeys.incrementAndGet();
      k = 0;
    }
    seen.key[i] = k;
    seen.seq[i] = s;
  }

  static double percentileMs(long[] ns, int n, double p) {
    if (n == 0) return -1;
    long[] sorted = Arrays.copyOf(ns, n);
    Arrays.sort(sorted);
    int idx = (int) Math.min(n - 1, Math.max(0, Math.ceil(p / 100 * n) - 1));
    return Math.round(sorted[idx] / 1e3) / 1e3;
  }

  static long processCpuNs() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean ? ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() : 0;
  }

  static long gcMs() {
    long t = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) t += Math.max(0, gc.getCollectionTime());
    return t;
  }
}
