// Reads a consumer group's committed offsets WITH their metadata through the Java client's Admin
// (listConsumerGroupOffsets -> OffsetAndMetadata.metadata()). kafka-consumer-groups
// (ConsumerGroupCommand) prints the offsets but never the metadata, and the metadata is what
// run()'s concurrency commits its finished-beyond-the-commit-point records in.
//
// Usage: ReadCommitted <bootstrap> <group id>...
// Output, one line per committed partition, tab-separated:
//   <group id> <topic> <partition> <offset> <metadata as base64 of its UTF-8 bytes, or "-" for null>
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Properties;

public class ReadCommitted {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        try (Admin admin = Admin.create(props)) {
            for (int i = 1; i < args.length; i++) {
                String group = args[i];
                Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
                    OffsetAndMetadata om = e.getValue();
                    // A partition the group has no offset for comes back as null.
                    if (om == null) continue;
                    String metadata = om.metadata() == null ? "-" : Base64.getEncoder().encodeToString(om.metadata().getBytes(StandardCharsets.UTF_8));
                    System.out.println(group + "\t" + e.getKey().topic() + "\t" + e.getKey().partition() + "\t" + om.offset() + "\t" + metadata);
                }
            }
        }
    }
}
