// The handler-bound family's topic (issue 31), compiled by the launcher's compileJava against the
// broker's own jars:
//
//   produce --bootstrap B --topic T --records N --keys K --size S
//     N records of S bytes, each keyed by one of K keys ("key-0000" ...) drawn at random (seeded),
//     its value "key-0000|seq|" then A-Z filler up to S bytes, where seq counts that key's records
//     from 0. The default partitioner puts a key on one partition, so a key's seq rises with its
//     offsets: a handler that sees a lower seq after a higher one of the same key broke key order.
//     batch.size 256 KiB, linger.ms 20 (the bench's other topics' batching), acks=all with the
//     idempotent producer, so that retries cannot reorder a key. Prints {"seconds": ...}.
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class HandlerTopic {
  public static void main(String[] argv) throws Exception {
    Map<String, String> a = new HashMap<>();
    for (int i = 1; i + 1 < argv.length; i += 2) a.put(argv[i].substring(2), argv[i + 1]);
    Properties p = new Properties();
    p.put("bootstrap.servers", a.get("bootstrap"));
    p.put("batch.size", "262144");
    p.put("linger.ms", "20");
    p.put("acks", "all");
    p.put("enable.idempotence", "true");
    p.put("key.serializer", ByteArraySerializer.class.getName());
    p.put("value.serializer", ByteArraySerializer.class.getName());
    int n = Integer.parseInt(a.get("records"));
    int keys = Integer.parseInt(a.get("keys"));
    int size = Integer.parseInt(a.get("size"));
    Random random = new Random(31);
    int[] seq = new int[keys];
    long started = System.nanoTime();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      for (int i = 0; i < n; i++) {
        int k = random.nextInt(keys);
        String key = String.format("key-%04d", k);
        byte[] head = (key + "|" + seq[k]++ + "|").getBytes(StandardCharsets.US_ASCII);
        byte[] value = new byte[Math.max(size, head.length)];
        System.arraycopy(head, 0, value, 0, head.length);
        for (int j = head.length; j < value.length; j++) value[j] = (byte) ('A' + random.nextInt(26));
        producer.send(new ProducerRecord<>(a.get("topic"), key.getBytes(StandardCharsets.US_ASCII), value));
      }
      producer.flush();
    }
    System.out.println("{\"seconds\":" + (System.nanoTime() - started) / 1e9 + "}");
  }
}
