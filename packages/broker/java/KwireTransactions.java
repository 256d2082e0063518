import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Writes transactions with the real KafkaProducer: each one committed or aborted, as asked. For
 * tests of read_committed consumers and for conformance fixtures (control batches, aborted
 * transaction lists). Run through @kwire/broker's writeTransactions(), which compiles this file
 * against the Kafka release's jars.
 *
 * Usage: KwireTransactions --bootstrap HOST:PORT --topic T --transactional-id ID
 *          --sequence commit,abort,... [--records N] [--partition P] [--compression C]
 *          [--key-prefix K] [--value-prefix V] [--no-headers] [--tombstone] [--config FILE]
 *
 * Transaction i writes N records: key K{i}-{j}, value V{i}-{j} (null for the last one with
 * --tombstone), headers tx={i}, outcome={commit|abort}, index={j}. It is flushed before it ends,
 * so every record has an offset even when the transaction aborts. After the last transaction it
 * prints one JSON line per record:
 *   {"transaction":0,"outcome":"commit","index":0,"partition":0,"offset":5,"key":"k0-0","value":"v0-0","headers":[["tx","0"],...]}
 * then {"done":true,"records":N}. Any failure ends the program with a stack trace and exit code 1.
 */
public final class KwireTransactions {
    private KwireTransactions() {}

    public static void main(String[] args) throws Exception {
        String bootstrap = null, topic = null, transactionalId = null, sequence = null, compression = "none";
        String keyPrefix = "k", valuePrefix = "v", configFile = null;
        int records = 3;
        Integer partition = null;
        boolean headers = true, tombstone = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--bootstrap": bootstrap = args[++i]; break;
                case "--topic": topic = args[++i]; break;
                case "--transactional-id": transactionalId = args[++i]; break;
                case "--sequence": sequence = args[++i]; break;
                case "--records": records = Integer.parseInt(args[++i]); break;
                case "--partition": partition = Integer.valueOf(args[++i]); break;
                case "--compression": compression = args[++i]; break;
                case "--key-prefix": keyPrefix = args[++i]; break;
                case "--value-prefix": valuePrefix = args[++i]; break;
                case "--no-headers": headers = false; break;
                case "--tombstone": tombstone = true; break;
                case "--config": configFile = args[++i]; break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (bootstrap == null || topic == null || transactionalId == null || sequence == null) {
            throw new IllegalArgumentException("--bootstrap, --topic, --transactional-id and --sequence are required");
        }
        String[] outcomes = sequence.split(",");
        for (String o : outcomes) {
            if (!o.equals("commit") && !o.equals("abort")) throw new IllegalArgumentException("--sequence takes commit and abort, not " + o);
        }

        Properties props = new Properties();
        if (configFile != null) {
            try (InputStream in = new FileInputStream(configFile)) {
                props.load(in);
            }
        }
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, "5");

        StringBuilder out = new StringBuilder();
        int written = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            producer.initTransactions();
            for (int t = 0; t < outcomes.length; t++) {
                String outcome = outcomes[t];
                producer.beginTransaction();
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                List<String[]> fields = new ArrayList<>();
                for (int j = 0; j < records; j++) {
                    String key = keyPrefix + t + "-" + j;
                    String value = tombstone && j == records - 1 ? null : valuePrefix + t + "-" + j;
                    List<Header> hs = new ArrayList<>();
                    if (headers) {
                        hs.add(new RecordHeader("tx", bytes(String.valueOf(t))));
                        hs.add(new RecordHeader("outcome", bytes(outcome)));
                        hs.add(new RecordHeader("index", bytes(String.valueOf(j))));
                    }
                    sent.add(producer.send(new ProducerRecord<>(topic, partition, bytes(key), value == null ? null : bytes(value), hs)));
                    fields.add(new String[] {key, value});
                }
                producer.flush();
                if (outcome.equals("commit")) producer.commitTransaction();
                else producer.abortTransaction();
                for (int j = 0; j < records; j++) {
                    RecordMetadata md = sent.get(j).get();
                    out.append("{\"transaction\":").append(t)
                        .append(",\"outcome\":\"").append(outcome).append('"')
                        .append(",\"index\":").append(j)
                        .append(",\"partition\":").append(md.partition())
                        .append(",\"offset\":").append(md.offset())
                        .append(",\"key\":").append(json(fields.get(j)[0]))
                        .append(",\"value\":").append(json(fields.get(j)[1]))
                        .append(",\"headers\":");
                    if (headers) {
                        out.append("[[\"tx\",").append(json(String.valueOf(t))).append("],[\"outcome\",").append(json(outcome))
                            .append("],[\"index\",").append(json(String.valueOf(j))).append("]]");
                    } else {
                        out.append("[]");
                    }
                    out.append("}\n");
                    written++;
                }
            }
        }
        out.append("{\"done\":true,\"records\":").append(written).append("}\n");
        System.out.print(out);
        System.out.flush();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String json(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
}
