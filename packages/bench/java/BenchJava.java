// The bench's Java peer, compiled by the launcher's compileJava against the broker's own jars.
//
//   consume --bootstrap B --topic T --partitions P --records N --warmup W --passes M [--touch value|full] [--prop k=v]...
//     The Java consumer measured like every other client: the topic read W + M times in this JVM,
//     each pass with a KafkaConsumer of its own (every partition assigned, from the beginning),
//     timed from its assignment to its last record, as ConsumerPerformance's fetch figures count. Configured as ConsumerPerformance configures it
//     (check.crcs=false, receive.buffer.bytes 2 MiB, max.partition.fetch.bytes 1 MiB), read
//     uncommitted like the others; --prop adds or overrides. Prints one JSON line per pass with the
//     count, the value bytes, the digest (the same ValueDigest / recordHash as the Node clients,
//     see src/meter.ts), the seconds, the process CPU and GC time of the pass.
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
    boolean full = "full".equals(a.get("touch"));
    List<TopicPartition> tps = new ArrayList<>();
    for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(topic, i));
    com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    for (int pass = 0; pass < warmup + passes; pass++) {
      // A consumer per pass, as the Node clients have: one consumer reused across passes would
      // start each pass behind the long poll (fetch.max.wait.ms) it left in flight at the end of
      // the previous one (one Fetch in flight per broker): 0.5 s before the first record.
      try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
        long cpu0 = os.getProcessCpuTime();
        long gc0 = gcMillis();
        long t0 = System.nanoTime();
        consumer.assign(tps);
        consumer.seekToBeginning(tps);
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
        }
        double seconds = (tLast - t0) / 1e9;
        double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
        System.out.println("{\"pass\":" + pass + ",\"warmup\":" + (pass < warmup) + ",\"records\":" + count + ",\"bytes\":" + bytes
            + ",\"checksum\":\"" + bytes + ":" + Integer.toHexString(xor) + "\",\"seconds\":" + seconds + ",\"cpuSeconds\":" + cpu
            + ",\"gcMs\":" + (gcMillis() - gc0) + ",\"firstSeconds\":" + (tFirst - t0) / 1e9 + ",\"halfSeconds\":" + (tHalf - t0) / 1e9
            + ",\"p95Seconds\":" + (t95 - t0) / 1e9 + "}");
        if (count != records) break;
      }
    }
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
