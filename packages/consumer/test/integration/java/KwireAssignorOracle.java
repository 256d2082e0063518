// Runs the Java client's own partition assignors on groups described on stdin, the way the
// Java leader does (ConsumerCoordinator.onLeaderElected): each member's JoinGroup metadata is
// decoded with ConsumerProtocol into a HashMap filled in JoinGroup order, the assignor runs
// against a Cluster with the given partitions (and replica racks), and each member's result is
// encoded with ConsumerProtocol.serializeAssignment. A fresh assignor instance per group.
//
// Input, one token-separated line each:
//   case <id> <assignor name>
//   topic <name> <partition count> [<racks of p0>|<racks of p1>|...]   racks comma-separated, "-" for none
//   member <member id> <group.instance.id or "-"> <base64 metadata>
//   run
// Output:
//   result <id>
//   assign <member id> <base64 assignment>
//   end <id>
// or "error <id> <exception>" when the assignor throws.
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

public class KwireAssignorOracle {
    private static final class Group {
        final String id;
        final String assignor;
        final Map<String, Node> rackNodes = new LinkedHashMap<>();
        final Node noRack = new Node(0, "localhost", 9092);
        final List<PartitionInfo> partitions = new ArrayList<>();
        final List<String[]> members = new ArrayList<>();

        Group(String id, String assignor) {
            this.id = id;
            this.assignor = assignor;
        }

        Node node(String rack) {
            return rackNodes.computeIfAbsent(rack, r -> new Node(rackNodes.size() + 1, "localhost", 9093 + rackNodes.size(), r));
        }
    }

    private static ConsumerPartitionAssignor assignor(String name) {
        switch (name) {
            case "range": return new RangeAssignor();
            case "roundrobin": return new RoundRobinAssignor();
            case "sticky": return new StickyAssignor();
            case "cooperative-sticky": return new CooperativeStickyAssignor();
            default: throw new IllegalArgumentException("unknown assignor " + name);
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        Group g = null;
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "case":
                    g = new Group(f[1], f[2]);
                    break;
                case "topic": {
                    int count = Integer.parseInt(f[2]);
                    String[] racks = f.length > 3 ? f[3].split("\\|", -1) : null;
                    for (int p = 0; p < count; p++) {
                        List<Node> replicas = new ArrayList<>();
                        if (racks != null && !racks[p].equals("-")) {
                            for (String r : racks[p].split(",")) replicas.add(g.node(r));
                        }
                        if (replicas.isEmpty()) replicas.add(g.noRack);
                        Node[] array = replicas.toArray(new Node[0]);
                        g.partitions.add(new PartitionInfo(f[1], p, array[0], array, array));
                    }
                    break;
                }
                case "member":
                    g.members.add(f);
                    break;
                case "run":
                    run(g, out);
                    g = null;
                    break;
                default:
                    throw new IllegalArgumentException("bad line: " + line);
            }
        }
        out.flush();
    }

    private static void run(Group g, PrintStream out) {
        try {
            List<Node> nodes = new ArrayList<>(g.rackNodes.values());
            nodes.add(g.noRack);
            Cluster cluster = new Cluster("kwire", nodes, g.partitions, Collections.emptySet(), Collections.emptySet());
            Map<String, Subscription> subscriptions = new HashMap<>();
            for (String[] m : g.members) {
                Subscription s = ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(Base64.getDecoder().decode(m[3])));
                s.setGroupInstanceId(m[2].equals("-") ? Optional.empty() : Optional.of(m[2]));
                subscriptions.put(m[1], s);
            }
            Map<String, Assignment> result = assignor(g.assignor).assign(cluster, new GroupSubscription(subscriptions)).groupAssignment();
            StringBuilder sb = new StringBuilder();
            sb.append("result ").append(g.id).append('\n');
            for (Map.Entry<String, Assignment> e : result.entrySet()) {
                ByteBuffer bytes = ConsumerProtocol.serializeAssignment(e.getValue());
                byte[] array = new byte[bytes.remaining()];
                bytes.get(array);
                sb.append("assign ").append(e.getKey()).append(' ').append(Base64.getEncoder().encodeToString(array)).append('\n');
            }
            sb.append("end ").append(g.id).append('\n');
            out.print(sb);
        } catch (Throwable t) {
            out.println("error " + g.id + " " + t.toString().replace('\n', ' '));
        }
    }
}
