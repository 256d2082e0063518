import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Properties;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.InvalidMetadataException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.protocol.Errors;

/**
 * Prints, as one JSON object, what kwire's code generator needs from the kafka-clients jar on the
 * classpath: the release version, every message schema (common/message/*.json, verbatim) and the
 * error table (Errors.values(): code, name, default message, exception class, and whether the
 * exception is retriable or signals stale metadata).
 *
 * Reading them from the jar of the release the tests run against means the generated code and
 * the broker always come from the same Kafka version, and no upstream file is copied into kwire.
 */
public final class DumpKafka {
    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder();
        // The version file kafka-clients itself reads (AppInfoParser moved packages in 4.4).
        Properties info = new Properties();
        try (InputStream in = DumpKafka.class.getClassLoader().getResourceAsStream("kafka/kafka-version.properties")) {
            if (in != null) info.load(in);
        }
        out.append("{\"kafkaVersion\":").append(quote(info.getProperty("version", "unknown")));

        URL marker = DumpKafka.class.getClassLoader().getResource("common/message/FetchRequest.json");
        if (marker == null) throw new IllegalStateException("common/message/FetchRequest.json is not on the classpath");
        TreeMap<String, String> schemas = new TreeMap<>();
        JarURLConnection connection = (JarURLConnection) marker.openConnection();
        try (JarFile jar = connection.getJarFile()) {
            Enumeration<JarEntry> entries = jar.entries();
            while (entries.hasMoreElements()) {
                JarEntry e = entries.nextElement();
                String name = e.getName();
                if (name.startsWith("common/message/") && name.endsWith(".json")) {
                    try (InputStream in = jar.getInputStream(e)) {
                        schemas.put(name.substring("common/message/".length()), new String(in.readAllBytes(), StandardCharsets.UTF_8));
                    }
                }
            }
        }
        out.append(",\"schemas\":{");
        boolean first = true;
        for (var e : schemas.entrySet()) {
            if (!first) out.append(',');
            first = false;
            out.append(quote(e.getKey())).append(':').append(quote(e.getValue()));
        }
        out.append('}');

        List<String> errors = new ArrayList<>();
        for (Errors e : Errors.values()) {
            ApiException ex = e.exception();
            errors.add("{\"code\":" + e.code()
                + ",\"name\":" + quote(e.name())
                + ",\"message\":" + quote(e.message() == null ? "" : e.message())
                + ",\"exception\":" + (ex == null ? "null" : quote(ex.getClass().getSimpleName()))
                + ",\"retriable\":" + (ex instanceof RetriableException)
                + ",\"invalidMetadata\":" + (ex instanceof InvalidMetadataException)
                + "}");
        }
        out.append(",\"errors\":[").append(String.join(",", errors)).append("]}");
        System.out.println(out);
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
