// The bench's share-group peer (KIP-932), compiled by the launcher's compileJava against the
// broker's own jars: Kafka's own ShareConsumerPerformance, run W + M times in this one JVM so that
// its measured passes see warm code, as every other client of the bench does.
//
//   perf --bootstrap B --topic T --records N --threads K --warmup W --passes M --group G
//     Pass i reads the whole topic in a share group of its own, "G-p<i>": that group's
//     share.auto.offset.reset is set to earliest first (Admin, a group config: a new share group
//     starts at the latest offset) and read back until the broker shows it, then
//     ShareConsumerPerformance.main runs with --threads K (K KafkaShareConsumers in one group, one
//     thread each), --num-records N, its other options at their defaults. Its result line (its
//     stdout, captured) is the pass's figure: records, MB (key + value bytes, MiB) and fetch.time.ms,
//     which runs from the consumers' creation (before subscribe: the join is included) to the last
//     thread's end. Prints one JSON line per pass with those, the process CPU and the GC time of the
//     pass.
//
//   configure --bootstrap B --groups G1,G2,...
//     The same earliest start for share groups the kwire members will join (one JVM for them all).
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;

public class BenchShare {
  public static void main(String[] argv) throws Exception {
    Map<String, String> a = new HashMap<>();
    for (int i = 1; i + 1 < argv.length; i += 2) a.put(argv[i].substring(2), argv[i + 1]);
    String bootstrap = a.get("bootstrap");
    Properties ap = new Properties();
    ap.put("bootstrap.servers", bootstrap);
    if (argv[0].equals("configure")) {
      try (Admin admin = Admin.create(ap)) {
        for (String g : a.get("groups").split(",")) startAtEarliest(admin, g);
      }
      System.out.println("{\"configured\":" + a.get("groups").split(",").length + "}");
      return;
    }
    String topic = a.get("topic");
    long records = Long.parseLong(a.get("records"));
    int threads = Integer.parseInt(a.getOrDefault("threads", "1"));
    int warmup = Integer.parseInt(a.getOrDefault("warmup", "1"));
    int passes = Integer.parseInt(a.getOrDefault("passes", "3"));
    String group = a.get("group");
    com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    PrintStream out = System.out;
    try (Admin admin = Admin.create(ap)) {
      for (int pass = 0; pass < warmup + passes; pass++) {
        String g = group + "-p" + pass;
        startAtEarliest(admin, g);
        long cpu0 = os.getProcessCpuTime();
        long gc0 = gcMillis();
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
          org.apache.kafka.tools.ShareConsumerPerformance.main(new String[] {
            "--bootstrap-server", bootstrap, "--topic", topic, "--num-records", String.valueOf(records),
            "--threads", String.valueOf(threads), "--group", g, "--timeout", "30000"});
        } finally {
          System.setOut(out);
        }
        double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
        long gc = gcMillis() - gc0;
        String text = captured.toString(StandardCharsets.UTF_8);
        String[] cells = resultLine(text);
        if (cells == null) {
          out.println("{\"pass\":" + pass + ",\"error\":\"no result line in: " + text.replace("\\", "\\\\").replace("\"", "'").replace("\n", " | ") + "\"}");
          break;
        }
        // start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms
        double mb = Double.parseDouble(cells[2]);
        long n = Long.parseLong(cells[5]);
        long fetchMs = Long.parseLong(cells[6]);
        out.println("{\"pass\":" + pass + ",\"warmup\":" + (pass < warmup) + ",\"records\":" + n + ",\"mb\":" + mb + ",\"seconds\":" + fetchMs / 1000.0
            + ",\"cpuSeconds\":" + cpu + ",\"gcMs\":" + gc + ",\"warning\":" + text.contains("WARNING") + "}");
        if (n < records) break;
      }
    }
  }

  /** The values line after the tool's header, split into its cells; null if there is none. */
  static String[] resultLine(String text) {
    String[] lines = text.split("\n");
    for (int i = 0; i + 1 < lines.length; i++) {
      if (!lines[i].startsWith("start.time")) continue;
      String[] cells = lines[i + 1].trim().split(",\\s*");
      return cells.length >= 7 ? cells : null;
    }
    return null;
  }

  /** share.auto.offset.reset=earliest on the group, then read back until the broker has applied it. */
  static void startAtEarliest(Admin admin, String group) throws Exception {
    ConfigResource r = new ConfigResource(ConfigResource.Type.GROUP, group);
    Map<ConfigResource, Collection<AlterConfigOp>> ops = Map.of(r, List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)));
    admin.incrementalAlterConfigs(ops).all().get();
    for (int i = 0; i < 200; i++) {
      ConfigEntry e = admin.describeConfigs(List.of(r)).all().get().get(r).get("share.auto.offset.reset");
      if (e != null && "earliest".equals(e.value())) return;
      Thread.sleep(25);
    }
    throw new IllegalStateException("share.auto.offset.reset of " + group + " never read back as earliest");
  }

  static long gcMillis() {
    long ms = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) ms += Math.max(0, gc.getCollectionTime());
    return ms;
  }
}
