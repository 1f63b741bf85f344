package kafkasticky;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Several {@link JavaMember}s in one JVM, each in its own thread with its own
 * {@code KafkaConsumer}: the Java twin of {@code kafka_sticky_plugin/groups/member_pack.py}, so
 * that a group of hundreds of Java members fits on 2 cores. It reads the same commands, one
 * JSON line each on stdin ({"start": MemberConfig JSON} starts a member incarnation,
 * {"stop": member, "incarnation": n} closes that one cleanly) and writes the same JSON lines as
 * a single Java member (one writer lock for all threads, {@code JavaMember.emit}).
 *
 * <p>Invariants: a member that fails reports its own "error" and "stopped" events and the
 * others go on; SIGTERM or the end of stdin closes every member cleanly (revoke, commit,
 * leave), each ending with its "stopped" event, before the JVM exits.
 */
public final class JavaMemberPack {
    private static final class Running {
        final JavaMember member;
        final AtomicBoolean stop = new AtomicBoolean(false);
        final Thread thread;

        Running(JavaMember member, Thread thread) {
            this.member = member;
            this.thread = thread;
        }

        void stop() {
            stop.set(true);
            member.wakeup();
        }
    }

    private final Map<String, Running> running = new ConcurrentHashMap<>();
    private final List<Running> all = new ArrayList<>();

    private static String key(Object member, long incarnation) {
        return member + "#" + incarnation;
    }

    private synchronized void start(Map<String, Object> config) {
        JavaMember member = new JavaMember(config);
        String key = key(config.get("member"), Json.asLong(config.get("incarnation")));
        Running[] holder = new Running[1];
        Thread thread = new Thread(() -> {
            try {
                member.run(holder[0].stop);
            } catch (RuntimeException exc) {
                // run() reported "error" and "stopped" already; the other members go on.
            } catch (Error exc) {
                member.reportError(exc.toString());
            } finally {
                running.remove(key);
            }
        }, "member-" + key);
        holder[0] = new Running(member, thread);
        running.put(key, holder[0]);
        all.add(holder[0]);
        thread.start();
    }

    private synchronized void stopEverything() {
        for (Running r : all) {
            r.stop();
        }
    }

    private void joinEverything() throws InterruptedException {
        List<Running> copy;
        synchronized (this) {
            copy = new ArrayList<>(all);
        }
        for (Running r : copy) {
            r.thread.join(30_000);
        }
    }

    /** Entry point: commands on stdin (class comment) until SIGTERM or the end of stdin. */
    public static void main(String[] args) throws IOException, InterruptedException {
        JavaMemberPack pack = new JavaMemberPack();
        AtomicBoolean closed = new AtomicBoolean(false);
        Thread hook = new Thread(() -> {
            if (closed.compareAndSet(false, true)) {
                pack.stopEverything();
                try {
                    pack.joinEverything();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        Runtime.getRuntime().addShutdownHook(hook);
        BufferedReader in = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> command = (Map<String, Object>) Json.parse(line);
            if (command.containsKey("start")) {
                @SuppressWarnings("unchecked")
                Map<String, Object> config = (Map<String, Object>) Json.parse(
                        (String) command.get("start"));
                pack.start(config);
            } else if (command.containsKey("stop")) {
                Running r = pack.running.get(
                        key(command.get("stop"), Json.asLong(command.get("incarnation"))));
                if (r != null) {
                    r.stop();
                }
            }
        }
        if (closed.compareAndSet(false, true)) {
            pack.stopEverything();
            pack.joinEverything();
        }
    }
}
