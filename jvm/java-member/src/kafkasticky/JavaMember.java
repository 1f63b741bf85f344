package kafkasticky;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * One consumer-group member on the genuine Java {@code KafkaConsumer}, the Java twin of
 * {@code kafka_sticky_plugin/groups/kafka_python_member.py}: the same configuration (argv[0], the
 * MemberConfig JSON) and the same JSON lines on stdout ({"type":"event",...} and
 * {"type":"deliveries",...}), so the Python harness reads it like its own child members.
 *
 * <p>Offsets are committed by hand: every commit_interval_s from the poll loop, and for
 * revoked partitions inside onPartitionsRevoked (commit-on-revoke); never for lost ones.
 * Positions are last-delivered offset + 1 and are forgotten on revoke, loss and assignment.
 * Timestamps are System.nanoTime() in seconds: CLOCK_MONOTONIC on Linux, the clock of
 * Python's time.monotonic(). SIGTERM closes the consumer (revoking, committing and leaving
 * the group) and ends with a "stopped" event.
 */
public final class JavaMember {
    /** The broker-side assignors a KIP-848 member may name (group.remote.assignor). */
    private static final List<String> BROKER_ASSIGNORS = List.of("uniform", "range");

    private final Map<String, Object> config;
    private final String member;
    private final long incarnation;
    private final Map<TopicPartition, Long> positions = new HashMap<>();
    private final TreeSet<String> ownedKeys = new TreeSet<>();
    private final List<TopicPartition> owned = new ArrayList<>();
    private volatile KafkaConsumer<byte[], byte[]> consumer;

    JavaMember(Map<String, Object> config) {
        this.config = config;
        this.member = (String) config.get("member");
        this.incarnation = Json.asLong(config.get("incarnation"));
    }

    private static double now() {
        return System.nanoTime() / 1e9;
    }

    private static synchronized void emit(Map<String, Object> message) {
        System.out.println(Json.write(message));
        System.out.flush();
    }

    private static List<List<Object>> pairs(Collection<TopicPartition> parts) {
        List<TopicPartition> sorted = new ArrayList<>(parts);
        sorted.sort((a, b) -> a.topic().equals(b.topic())
                ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()));
        List<List<Object>> out = new ArrayList<>();
        for (TopicPartition tp : sorted) {
            List<Object> pair = new ArrayList<>();
            pair.add(tp.topic());
            pair.add((long) tp.partition());
            out.add(pair);
        }
        return out;
    }

    private int generation() {
        try {
            return consumer.groupMetadata().generationId();
        } catch (RuntimeException e) {
            return -1;
        }
    }

    private void event(String kind, Collection<TopicPartition> parts, List<Long> offsets,
                       boolean withOwned, int generation, String detail) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("t", now());
        e.put("member", member);
        e.put("incarnation", incarnation);
        e.put("kind", kind);
        e.put("partitions", pairs(parts));
        e.put("owned_after", withOwned ? pairs(owned) : Collections.emptyList());
        e.put("offsets", offsets);
        e.put("generation", (long) generation);
        e.put("detail", detail);
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("type", "event");
        message.put("event", e);
        emit(message);
    }

    private void simple(String kind, String detail) {
        event(kind, Collections.emptyList(), Collections.emptyList(), false, -1, detail);
    }

    /** Commit {@code chosen} synchronously, reporting committed or commit_failed. */
    private void commit(Map<TopicPartition, Long> chosen) {
        if (chosen.isEmpty()) {
            return;
        }
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (Map.Entry<TopicPartition, Long> entry : chosen.entrySet()) {
            offsets.put(entry.getKey(), new OffsetAndMetadata(entry.getValue()));
        }
        List<TopicPartition> parts = new ArrayList<>(chosen.keySet());
        List<List<Object>> sorted = pairs(parts);
        List<Long> values = new ArrayList<>();
        for (List<Object> pair : sorted) {
            values.add(chosen.get(new TopicPartition((String) pair.get(0),
                    (int) (long) (Long) pair.get(1))));
        }
        try {
            consumer.commitSync(offsets);
        } catch (RuntimeException exc) {
            event("commit_failed", parts, Collections.emptyList(), false, -1, exc.toString());
            return;
        }
        event("committed", parts, values, false, -1, "");
    }

    private void forget(Collection<TopicPartition> parts) {
        for (TopicPartition tp : parts) {
            positions.remove(tp);
            owned.remove(tp);
        }
    }

    private final class Listener implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
            String probe = "still_assigned=" + consumer.assignment().containsAll(revoked);
            Map<TopicPartition, Long> chosen = new HashMap<>();
            for (TopicPartition tp : revoked) {
                if (positions.containsKey(tp)) {
                    chosen.put(tp, positions.get(tp));
                }
            }
            commit(chosen);
            forget(revoked);
            event("revoked", revoked, Collections.emptyList(), true, generation(), probe);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
            for (TopicPartition tp : assigned) {
                positions.remove(tp);
                if (!owned.contains(tp)) {
                    owned.add(tp);
                }
            }
            event("assigned", assigned, Collections.emptyList(), true, generation(), "");
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> lost) {
            forget(lost);
            event("lost", lost, Collections.emptyList(), true, generation(), "");
        }
    }

    private static String assignorClass(String name) {
        switch (name) {
            case "sticky":
                return "org.apache.kafka.clients.consumer.StickyAssignor";
            case "cooperative-sticky":
                return "org.apache.kafka.clients.consumer.CooperativeStickyAssignor";
            case "range":
                return "org.apache.kafka.clients.consumer.RangeAssignor";
            case "roundrobin":
                return "org.apache.kafka.clients.consumer.RoundRobinAssignor";
            default:
                throw new IllegalArgumentException("no Java assignor named " + name);
        }
    }

    private Properties properties() {
        Properties p = new Properties();
        p.put("bootstrap.servers", config.get("bootstrap"));
        p.put("group.id", config.get("group_id"));
        Object instance = config.get("group_instance_id");
        if (instance != null) {
            p.put("group.instance.id", instance);
        }
        String clientId = (String) config.get("client_id");
        p.put("client.id", clientId == null || clientId.isEmpty()
                ? member + "-" + incarnation : clientId);
        Object rack = config.get("client_rack");
        if (rack != null) {
            p.put("client.rack", rack);
        }
        // KIP-848 (group.protocol=consumer): the broker assigns and sets the session, so the
        // assignors and the session settings are classic-only (the consumer refuses them).
        Object protocol = config.get("group_protocol");
        boolean classic = protocol == null || "classic".equals(protocol);
        p.put("group.protocol", classic ? "classic" : (String) protocol);
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        if (classic) {
            p.put("session.timeout.ms",
                    String.valueOf(Json.asLong(config.get("session_timeout_ms"))));
            p.put("heartbeat.interval.ms",
                    String.valueOf(Json.asLong(config.get("heartbeat_interval_ms"))));
        }
        p.put("max.poll.interval.ms",
                String.valueOf(Json.asLong(config.get("max_poll_interval_ms"))));
        p.put("metadata.max.age.ms", "5000");
        // KIP-714 client telemetry: not part of what is tested, and brokers without it
        // (the embedded one) need not be asked.
        p.put("enable.metrics.push", "false");
        List<?> assignors = (List<?>) config.get("assignors");
        if (classic) {
            List<String> classes = new ArrayList<>();
            for (Object name : assignors) {
                classes.add(assignorClass((String) name));
            }
            p.put("partition.assignment.strategy", String.join(",", classes));
        } else if (!assignors.isEmpty() && BROKER_ASSIGNORS.contains(assignors.get(0))) {
            // assignors[0] may name the broker's assignor the member asks for (KIP-848).
            p.put("group.remote.assignor", (String) assignors.get(0));
        }
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        return p;
    }

    private static long sequence(byte[] value) {
        if (value == null) {
            return -1;
        }
        try {
            return Long.parseLong(new String(value, StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Ends a running {@link #run} promptly (its poll returns); safe from any thread. */
    void wakeup() {
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
    }

    /** Report an error of this member incarnation that {@link #run} did not report. */
    void reportError(String detail) {
        simple("error", detail);
    }

    /** Consume until {@code stop} is set (and {@link #wakeup} called), then close cleanly. */
    void run(AtomicBoolean stop) {
        consumer = new KafkaConsumer<>(properties());
        try {
            List<String> topics = new ArrayList<>();
            for (Object t : (List<?>) config.get("topics")) {
                topics.add((String) t);
            }
            consumer.subscribe(topics, new Listener());
            simple("started", "java kafka-clients "
                    + System.getProperty("kafkasticky.clients", "?"));
            long pollMs = Json.asLong(config.get("poll_timeout_ms"));
            double commitEvery = ((Number) config.get("commit_interval_s")).doubleValue();
            int lastGeneration = -1;
            double lastCommit = now();
            while (!stop.get()) {
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(Duration.ofMillis(pollMs));
                } catch (WakeupException e) {
                    break;
                }
                double t = now();
                List<Object> batch = new ArrayList<>();
                for (ConsumerRecord<byte[], byte[]> rec : records) {
                    Map<String, Object> d = new LinkedHashMap<>();
                    d.put("t", t);
                    d.put("member", member);
                    d.put("incarnation", incarnation);
                    d.put("topic", rec.topic());
                    d.put("partition", (long) rec.partition());
                    d.put("offset", rec.offset());
                    d.put("sequence", sequence(rec.value()));
                    batch.add(d);
                    positions.put(new TopicPartition(rec.topic(), rec.partition()),
                            rec.offset() + 1);
                }
                if (!batch.isEmpty()) {
                    Map<String, Object> message = new LinkedHashMap<>();
                    message.put("type", "deliveries");
                    message.put("deliveries", batch);
                    emit(message);
                }
                int generation = generation();
                if (generation != lastGeneration && generation >= 0) {
                    lastGeneration = generation;
                    event("generation", Collections.emptyList(), Collections.emptyList(), true,
                            generation, "");
                }
                if (t - lastCommit >= commitEvery) {
                    Map<TopicPartition, Long> chosen = new HashMap<>();
                    for (TopicPartition tp : consumer.assignment()) {
                        if (positions.containsKey(tp)) {
                            chosen.put(tp, positions.get(tp));
                        }
                    }
                    try {
                        commit(chosen);
                    } catch (WakeupException e) {
                        break;
                    }
                    lastCommit = t;
                }
            }
        } catch (RuntimeException exc) {
            simple("error", exc.toString());
            throw exc;
        } finally {
            try {
                closeConsumer();
            } finally {
                simple("stopped", "");
            }
        }
    }

    @SuppressWarnings("deprecation") // close(Duration): the one close with a bound in 3.9 and 4.x
    private void closeConsumer() {
        consumer.close(Duration.ofSeconds(20));
    }

    /** Entry point: argv[0] is the MemberConfig JSON; runs until SIGTERM. */
    public static void main(String[] args) throws InterruptedException {
        @SuppressWarnings("unchecked")
        Map<String, Object> config = (Map<String, Object>) Json.parse(args[0]);
        JavaMember self = new JavaMember(config);
        AtomicBoolean stop = new AtomicBoolean(false);
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.set(true);
            self.wakeup();
            try {
                done.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        try {
            self.run(stop);
        } finally {
            done.countDown();
        }
    }
}
