// The bench's Java peer, compiled by the launcher's compileJava against the broker's own jars.
//
//   consume --bootstrap B --topic T --partitions P --records N --warmup W [--warmup-seconds S] --passes M [--pass-seconds C] [--touch value|full] [--prop k=v]...
//     The Java consumer measured like every other client: the topic read W + M times in this JVM
//     (more warm-up passes than W until S seconds have passed since the first began, as passes.ts does),
//     each pass with a KafkaConsumer of its own (every partition assigned at offset 0), timed from
//     the event the Node clients' ready() marks (connected, the topic's metadata known, partitions
//     assigned, positions known) to its last record, or cut at C seconds (then "capped"). Configured as ConsumerPerformance configures it
//     (check.crcs=false, receive.buffer.bytes 2 MiB, max.partition.fetch.bytes 1 MiB), read
//     uncommitted like the others; --prop adds or overrides. Prints one JSON line per pass with the
//     count, the value bytes, the digest (the same ValueDigest / recordHash as the Node clients,
//     see src/meter.ts), the seconds, the process CPU and GC time of the pass.
//
//   fairness --bootstrap B --topic LIVE --backlog T --backlog-partitions P --backlog-records N --records L [--warmup-ms W] [--before-ms MS]
//     Latency under load (issue 16): one KafkaConsumer at its defaults (read_uncommitted) assigned
//     the live topic's partition 0 and every partition of the backlog topic from the beginning, the
//     backlog paused. ProducerPerformance writes the live partition at a steady rate; W ms after
//     the first live record plus MS ms the backlog is resumed (the drain). End-to-end latency of
//     each live record = its poll's return - CreateTime; records produced before the resume are
//     "before" (the first W ms excluded), between the resume and the backlog's last record
//     "during". Prints one JSON line {"fairness": {...}} as the Node fairness client reports it.
//
//   produce --bootstrap B --topic T --records N --size S [--compression C]
//     The full-touch data: records of S random A-Z bytes with a 16-byte key ("k-" and 14 digits of
//     the record's number) and two headers ("trace-id": 16 random A-Z bytes, "source": "kwire-bench"),
//     batch.size 256 KiB, linger.ms 20, acks 1, as the value-only topics are loaded.
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class BenchJava {
  static final int FNV_PRIME = 0x01000193;
  static final int FNV_BASIS = 0x811c9dc5;

  public static void main(String[] argv) throws Exception {
    Map<String, String> a = new HashMap<>();
    List<String> props = new ArrayList<>();
    for (int i = 1; i + 1 < argv.length; i += 2) {
      if (argv[i].equals("--prop")) props.add(argv[i + 1]);
      else a.put(argv[i].substring(2), argv[i + 1]);
    }
    if (argv[0].equals("produce")) produce(a);
    else if (argv[0].equals("fairness")) fairness(a);
    else consume(a, props);
  }

  static void produce(Map<String, String> a) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", a.get("bootstrap"));
    p.put("batch.size", "262144");
    p.put("linger.ms", "20");
    p.put("acks", "1");
    p.put("compression.type", a.getOrDefault("compression", "none"));
    p.put("key.serializer", ByteArraySerializer.class.getName());
    p.put("value.serializer", ByteArraySerializer.class.getName());
    long n = Long.parseLong(a.get("records"));
    int size = Integer.parseInt(a.get("size"));
    Random random = new Random(7);
    byte[] source = "kwire-bench".getBytes("UTF-8");
    long started = System.nanoTime();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      for (long i = 0; i < n; i++) {
        byte[] value = new byte[size];
        for (int j = 0; j < size; j++) value[j] = (byte) ('A' + random.nextInt(26));
        byte[] trace = new byte[16];
        for (int j = 0; j < 16; j++) trace[j] = (byte) ('A' + random.nextInt(26));
        byte[] key = String.format("k-%014d", i).getBytes("UTF-8");
        ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(a.get("topic"), key, value);
        r.headers().add("trace-id", trace);
        r.headers().add("source", source);
        producer.send(r);
      }
      producer.flush();
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    System.out.println("{\"records\":" + n + ",\"seconds\":" + seconds + "}");
  }

  static void consume(Map<String, String> a, List<String> extra) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", a.get("bootstrap"));
    p.put("group.id", "bench-java-" + System.nanoTime());
    p.put("enable.auto.commit", "false");
    p.put("auto.offset.reset", "earliest");
    p.put("isolation.level", "read_uncommitted");
    // What ConsumerPerformance sets.
    p.put("check.crcs", "false");
    p.put("receive.buffer.bytes", String.valueOf(2 * 1024 * 1024));
    p.put("max.partition.fetch.bytes", String.valueOf(1024 * 1024));
    p.put("key.deserializer", ByteArrayDeserializer.class.getName());
    p.put("value.deserializer", ByteArrayDeserializer.class.getName());
    for (String kv : extra) {
      int eq = kv.indexOf('=');
      p.put(kv.substring(0, eq), kv.substring(eq + 1));
    }
    String topic = a.get("topic");
    int partitions = Integer.parseInt(a.get("partitions"));
    long records = Long.parseLong(a.get("records"));
    int warmup = Integer.parseInt(a.getOrDefault("warmup", "1"));
    int passes = Integer.parseInt(a.getOrDefault("passes", "5"));
    double warmupSeconds = Double.parseDouble(a.getOrDefault("warmup-seconds", "0"));
    long capNs = (long) (Double.parseDouble(a.getOrDefault("pass-seconds", "0")) * 1e9);
    // Counted from the first pass's start, as passes.ts does.
    long started = System.nanoTime();
    int warmed = 0;
    int measured = 0;
    boolean full = "full".equals(a.get("touch"));
    List<TopicPartition> tps = new ArrayList<>();
    for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(topic, i));
    com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    for (int pass = 0; measured < passes; pass++) {
      boolean warming = warmed < warmup || (System.nanoTime() - started) / 1e9 < warmupSeconds;
      if (warming) warmed++;
      else measured++;
      // A consumer per pass, as the Node clients have: one consumer reused across passes would
      // start each pass behind the long poll (fetch.max.wait.ms) it left in flight at the end of
      // the previous one (one Fetch in flight per broker): 0.5 s before the first record.
      try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
        // The clock starts where kwire's does (its assign() with offset 0, then ready()): connected
        // with the topic's metadata, every partition assigned, positions known. seek(0) rather than
        // seekToBeginning, whose ListOffsets would otherwise fall inside the timed phase.
        consumer.partitionsFor(topic);
        consumer.assign(tps);
        for (TopicPartition tp : tps) consumer.seek(tp, 0L);
        long cpu0 = os.getProcessCpuTime();
        long gc0 = gcMillis();
        long t0 = System.nanoTime();
        boolean capped = false;
        long count = 0;
        long bytes = 0;
        int xor = 0;
        long tLast = t0;
        long tFirst = 0;
        long tHalf = 0;
        long t95 = 0;
        long idleSince = System.nanoTime();
        while (count < records) {
          ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(500));
          if (batch.isEmpty()) {
            if (System.nanoTime() - idleSince > 30_000_000_000L) break;
            continue;
          }
          idleSince = System.nanoTime();
          for (ConsumerRecord<byte[], byte[]> r : batch) {
            byte[] v = r.value();
            if (v != null) bytes += v.length;
            xor ^= full ? recordHash(r) : valueHash(v);
            count++;
          }
          tLast = System.nanoTime();
          if (tFirst == 0) tFirst = tLast;
          if (tHalf == 0 && count * 2 >= records) tHalf = tLast;
          if (t95 == 0 && count * 20 >= records * 19) t95 = tLast;
          if (capNs > 0 && count < records && tLast - t0 >= capNs) {
            capped = true;
            break;
          }
        }
        double seconds = (tLast - t0) / 1e9;
        double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
        System.out.println("{\"pass\":" + pass + ",\"warmup\":" + warming + ",\"records\":" + count + ",\"bytes\":" + bytes
            + ",\"checksum\":\"" + bytes + ":" + Integer.toHexString(xor) + "\",\"seconds\":" + seconds + ",\"cpuSeconds\":" + cpu
            + ",\"gcMs\":" + (gcMillis() - gc0) + ",\"firstSeconds\":" + (tFirst - t0) / 1e9 + ",\"halfSeconds\":" + (tHalf - t0) / 1e9
            + ",\"p95Seconds\":" + (t95 - t0) / 1e9 + ",\"capped\":" + capped + "}");
        if (count != records && !capped) break;
      }
    }
  }

  static void fairness(Map<String, String> a) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", a.get("bootstrap"));
    p.put("group.id", "bench-java-fairness-" + System.nanoTime());
    p.put("enable.auto.commit", "false");
    p.put("auto.offset.reset", "earliest");
    p.put("isolation.level", "read_uncommitted");
    p.put("key.deserializer", ByteArrayDeserializer.class.getName());
    p.put("value.deserializer", ByteArrayDeserializer.class.getName());
    String live = a.get("topic");
    String backlogTopic = a.get("backlog");
    int bp = Integer.parseInt(a.get("backlog-partitions"));
    long backlogRecords = Long.parseLong(a.get("backlog-records"));
    int liveRecords = Integer.parseInt(a.get("records"));
    long warmupMs = Long.parseLong(a.getOrDefault("warmup-ms", "2000"));
    long beforeMs = Long.parseLong(a.getOrDefault("before-ms", "4000"));
    List<TopicPartition> backlog = new ArrayList<>();
    for (int i = 0; i < bp; i++) backlog.add(new TopicPartition(backlogTopic, i));
    List<TopicPartition> all = new ArrayList<>(backlog);
    all.add(new TopicPartition(live, 0));
    // Sub-millisecond wall clock: the epoch milliseconds at start plus the monotonic clock since.
    long baseMs = System.currentTimeMillis();
    long baseNs = System.nanoTime();
    long[] ts = new long[liveRecords];
    double[] lat = new double[liveRecords];
    int liveCount = 0;
    long backlogCount = 0;
    double firstLiveAt = 0;
    double resumedAt = 0;
    double drainEnd = 0;
    String error = null;
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      consumer.assign(all);
      consumer.seekToBeginning(all);
      consumer.pause(backlog);
      System.out.println("{\"ready\":true}");
      System.out.flush();
      long idleSince = System.nanoTime();
      while (liveCount < liveRecords || (resumedAt > 0 && backlogCount < backlogRecords) || resumedAt == 0) {
        ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(100));
        double at = baseMs + (System.nanoTime() - baseNs) / 1e6;
        if (batch.isEmpty()) {
          if (System.nanoTime() - idleSince > 60_000_000_000L) {
            error = "no record for 60 s after " + liveCount + " live and " + backlogCount + " backlog records";
            break;
          }
        } else idleSince = System.nanoTime();
        for (ConsumerRecord<byte[], byte[]> r : batch) {
          if (r.topic().equals(live)) {
            if (firstLiveAt == 0) firstLiveAt = at;
            if (liveCount < liveRecords) {
              ts[liveCount] = r.timestamp();
              lat[liveCount] = at - r.timestamp();
            }
            liveCount++;
          } else backlogCount++;
        }
        if (resumedAt > 0 && drainEnd == 0 && backlogCount >= backlogRecords) drainEnd = at;
        if (resumedAt == 0 && firstLiveAt > 0 && at >= firstLiveAt + warmupMs + beforeMs) {
          consumer.resume(backlog);
          resumedAt = baseMs + (System.nanoTime() - baseNs) / 1e6;
        }
      }
    }
    long firstTs = liveCount > 0 ? ts[0] : 0;
    List<Double> before = new ArrayList<>();
    List<Double> during = new ArrayList<>();
    for (int i = 0; i < Math.min(liveCount, liveRecords); i++) {
      if (ts[i] < firstTs + warmupMs) continue;
      if (ts[i] < resumedAt) before.add(lat[i]);
      else if (drainEnd > 0 && ts[i] <= drainEnd) during.add(lat[i]);
    }
    StringBuilder out = new StringBuilder("{\"fairness\":{\"before\":").append(summary(before)).append(",\"during\":").append(summary(during));
    out.append(",\"liveRecords\":").append(liveCount).append(",\"backlogRecords\":").append(backlogCount);
    out.append(",\"drainSeconds\":").append(drainEnd > 0 ? Math.round(drainEnd - resumedAt) / 1000.0 : 0);
    out.append(",\"drainRecordsPerSec\":").append(drainEnd > resumedAt ? Math.round(backlogCount / ((drainEnd - resumedAt) / 1000)) : 0).append("}");
    if (error != null) out.append(",\"error\":\"").append(error).append("\"");
    System.out.println(out.append("}"));
  }

  /** count, p50, p99, p999 and max of latencies in ms (nearest rank), as JSON. */
  static String summary(List<Double> v) {
    double[] a = new double[v.size()];
    for (int i = 0; i < a.length; i++) a[i] = v.get(i);
    java.util.Arrays.sort(a);
    return "{\"count\":" + a.length + ",\"p50\":" + rank(a, 50) + ",\"p99\":" + rank(a, 99) + ",\"p999\":" + rank(a, 99.9) + ",\"max\":" + (a.length > 0 ? Math.round(a[a.length - 1] * 1000) / 1000.0 : 0) + "}";
  }

  static double rank(double[] a, double p) {
    if (a.length == 0) return 0;
    int i = (int) Math.ceil(p / 100 * a.length) - 1;
    return Math.round(a[Math.max(0, Math.min(a.length - 1, i))] * 1000) / 1000.0;
  }

  static long gcMillis() {
    long ms = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) ms += Math.max(0, gc.getCollectionTime());
    return ms;
  }

  /** valueHash of src/meter.ts: FNV-1a over the length and the first and last 8 bytes. */
  static int valueHash(byte[] v) {
    if (v == null) return 0;
    int n = v.length;
    int h = FNV_BASIS ^ n;
    for (int i = 0; i < 8 && i < n; i++) h = (h ^ (v[i] & 0xff)) * FNV_PRIME;
    for (int i = Math.max(8, n - 8); i < n; i++) h = (h ^ (v[i] & 0xff)) * FNV_PRIME;
    return h;
  }

  /** fnvBytes of src/meter.ts. */
  static int fnv(int h, byte[] b) {
    if (b == null) return (h ^ 0xff) * FNV_PRIME;
    for (byte x : b) h = (h ^ (x & 0xff)) * FNV_PRIME;
    return (h ^ b.length) * FNV_PRIME;
  }

  /** recordHash of src/meter.ts: value, key, headers (XORed), offset and timestamp. */
  static int recordHash(ConsumerRecord<byte[], byte[]> r) {
    int h = fnv(FNV_BASIS, r.value());
    h = fnv(h, r.key());
    int hh = 0;
    for (Header header : r.headers()) {
      int k = FNV_BASIS;
      String key = header.key();
      for (int i = 0; i < key.length(); i++) k = (k ^ key.charAt(i)) * FNV_PRIME;
      k = (k ^ key.length()) * FNV_PRIME;
      hh ^= fnv(k, header.value());
    }
    h = (h ^ hh) * FNV_PRIME;
    h = (h ^ (int) r.offset()) * FNV_PRIME;
    h = (h ^ (int) r.timestamp()) * FNV_PRIME;
    return h;
  }
}
