import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.Optional;

/**
 * Runs a Kafka main class (the broker or one of its tools) and ends the JVM when the Node process
 * that started it is gone.
 *
 * Why: the launcher stops its JVMs on every path it sees (stop(), process exit, SIGINT, SIGTERM),
 * but a Node process killed with SIGKILL, or one that crashes in native code, runs none of its
 * handlers. Without this, such a test run would leave a broker listening on loopback for ever.
 *
 * Usage: java -Dkwire.parent.pid=PID -cp ... KwireWatchdog <main class> [args...]
 * The JVM polls its parent twice a second; once the parent is not PID any more (the JVM was
 * re-parented) it calls System.exit, which runs Kafka's own shutdown hooks (a controlled shutdown),
 * and halts outright if those take more than 20 seconds.
 */
public final class KwireWatchdog {
    private KwireWatchdog() {}

    public static void main(String[] args) throws Throwable {
        if (args.length == 0) {
            System.err.println("usage: KwireWatchdog <main class> [args...]");
            System.exit(2);
        }
        String parent = System.getProperty("kwire.parent.pid");
        if (parent != null && !parent.isEmpty()) {
            watch(Long.parseLong(parent));
        }
        Class<?> target = Class.forName(args[0]);
        Method main = target.getMethod("main", String[].class);
        try {
            main.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private static void watch(long expectedParent) {
        Thread watcher = new Thread(() -> {
            while (true) {
                Optional<ProcessHandle> parent = ProcessHandle.current().parent();
                boolean alive = parent.isPresent() && parent.get().pid() == expectedParent && parent.get().isAlive();
                if (!alive) {
                    System.err.println("kwire watchdog: parent process " + expectedParent + " is gone; shutting down");
                    Thread halt = new Thread(() -> {
                        pause(20_000);
                        Runtime.getRuntime().halt(137);
                    }, "kwire-watchdog-halt");
                    halt.setDaemon(true);
                    halt.start();
                    System.exit(143);
                    return;
                }
                pause(500);
            }
        }, "kwire-watchdog");
        watcher.setDaemon(true);
        watcher.start();
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
