/*
 * The Java peer of `make bench`: Apache Kafka's own StickyAssignor / CooperativeStickyAssignor
 * (kafka-clients, pinned in pom.xml) run on the JoinGroup member metadata bytes that
 * benchmarks/run.py wrote, the exact bytes our leader gets.
 *
 * Usage: java -cp build/jvm/bench-peer/classes:build/jvm/bench-peer/lib/* BenchPeer
 *            PROTOCOL INPUT OUTPUT [CALLS [BUDGET_S]]
 *
 * Up to CALLS (default 1) calls in this one JVM, each timed apart; the first is the cold call
 * (a JVM whose JIT has seen only a two-member warm-up, as in a leader's first rebalance), the
 * later ones are warm; after the first two (the cold call and one warm one), no further call
 * starts once the calls so far took BUDGET_S seconds (default: no budget). Before each call one line {"begin": i} is printed (the
 * caller's time limit runs from it), after it one JSON line with:
 *   decode_s: ConsumerProtocol.deserializeSubscription of every member (what the consumer
 *             coordinator does before it calls the assignor);
 *   assign_s: assign(partitionsPerTopic, subscriptions), or assignPartitions with
 *             PartitionInfo replicas carrying racks when INPUT has replica racks (KIP-881);
 *             CooperativeStickyAssignor's own cooperative adjustment is inside it;
 *   encode_s: ConsumerProtocol.serializeAssignment of every member's plan;
 *   cpu_s:    the process's CPU seconds over the call (every thread: GC and JIT included);
 *   gc_s:     the collectors' accumulated collection time over the call (GC MXBeans).
 * The last call's assignment is written to OUTPUT, then {"done": true, ...} is printed.
 * A tiny group is assigned once first so that class loading is not timed.
 * File framing: docs/benchmarks.md.
 */

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.AbstractPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public final class BenchPeer {
    private BenchPeer() {}

    private static String str(DataInputStream in) throws IOException {
        byte[] b = new byte[in.readShort()];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    private static void str(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeShort(b.length);
        out.write(b);
    }

    private static AbstractPartitionAssignor assignor(String protocol) {
        switch (protocol) {
            case "sticky":
                return new StickyAssignor();
            case "cooperative-sticky":
                return new CooperativeStickyAssignor();
            default:
                throw new IllegalArgumentException("unknown protocol " + protocol);
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 3) {
            System.err.println("usage: BenchPeer sticky|cooperative-sticky INPUT OUTPUT [CALLS [BUDGET_S]]");
            System.exit(2);
        }
        String protocol = args[0];

        Map<String, Integer> counts = new LinkedHashMap<>();
        Map<String, byte[]> metadata = new LinkedHashMap<>();
        Map<String, List<PartitionInfo>> infos = null;
        try (DataInputStream in = new DataInputStream(
                new BufferedInputStream(new FileInputStream(args[1]), 1 << 20))) {
            byte[] magic = new byte[4];
            in.readFully(magic);
            if (!"KSB1".equals(new String(magic, StandardCharsets.US_ASCII))) {
                throw new IOException(args[1] + ": not a bench input");
            }
            int topics = in.readInt();
            for (int i = 0; i < topics; i++) {
                String topic = str(in);
                counts.put(topic, in.readInt());
            }
            int members = in.readInt();
            for (int i = 0; i < members; i++) {
                String id = str(in);
                byte[] raw = new byte[in.readInt()];
                in.readFully(raw);
                metadata.put(id, raw);
            }
            int sets = in.readInt();
            if (sets > 0) {
                // Replica racks: one Node per rack name (the Node only carries the rack).
                Map<String, Node> nodes = new HashMap<>();
                Node[][] replicas = new Node[sets][];
                for (int s = 0; s < sets; s++) {
                    replicas[s] = new Node[in.readShort()];
                    for (int k = 0; k < replicas[s].length; k++) {
                        String rack = str(in);
                        replicas[s][k] = nodes.computeIfAbsent(
                            rack, r -> new Node(nodes.size(), "127.0.0.1", 9092, r));
                    }
                }
                infos = new HashMap<>();
                for (Map.Entry<String, Integer> e : counts.entrySet()) {
                    List<PartitionInfo> list = new ArrayList<>(e.getValue());
                    for (int p = 0; p < e.getValue(); p++) {
                        Node[] r = replicas[in.readShort()];
                        list.add(new PartitionInfo(e.getKey(), p, r[0], r, r));
                    }
                    infos.put(e.getKey(), list);
                }
            }
        }

        warmUp(protocol);

        int calls = args.length > 3 ? Integer.parseInt(args[3]) : 1;
        double budget = args.length > 4 ? Double.parseDouble(args[4]) : Double.MAX_VALUE;
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        Map<String, byte[]> encoded = null;
        double spent = 0;
        int done = 0;
        for (int run = 0; run < calls && (run < 2 || spent < budget); run++) {
            encoded = null;
            System.out.printf("{\"begin\": %d}%n", run);
            System.out.flush();
            long gc0 = gcMillis();
            long cpu0 = os.getProcessCpuTime();
            long t0 = System.nanoTime();
            Map<String, Subscription> subscriptions = new HashMap<>();
            for (Map.Entry<String, byte[]> e : metadata.entrySet()) {
                subscriptions.put(e.getKey(),
                    ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(e.getValue())));
            }
            long t1 = System.nanoTime();
            AbstractPartitionAssignor a = assignor(protocol);
            Map<String, List<TopicPartition>> plan = infos == null
                ? a.assign(counts, subscriptions)
                : a.assignPartitions(infos, subscriptions);
            long t2 = System.nanoTime();
            encoded = new LinkedHashMap<>();
            for (Map.Entry<String, List<TopicPartition>> e : plan.entrySet()) {
                ByteBuffer buf = ConsumerProtocol.serializeAssignment(new Assignment(e.getValue()));
                byte[] b = new byte[buf.remaining()];
                buf.get(b);
                encoded.put(e.getKey(), b);
            }
            long t3 = System.nanoTime();
            long cpu1 = os.getProcessCpuTime();
            long gc1 = gcMillis();
            spent += (t3 - t0) / 1e9;
            done++;
            System.out.printf(
                "{\"call\": %d, \"decode_s\": %.6f, \"assign_s\": %.6f, \"encode_s\": %.6f, "
                    + "\"cpu_s\": %.6f, \"gc_s\": %.6f}%n",
                run, (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9, (cpu1 - cpu0) / 1e9,
                (gc1 - gc0) / 1e3);
            System.out.flush();
            subscriptions = null;
            plan = null;
        }

        try (DataOutputStream out = new DataOutputStream(
                new BufferedOutputStream(new FileOutputStream(args[2]), 1 << 20))) {
            out.writeInt(encoded.size());
            for (Map.Entry<String, byte[]> e : encoded.entrySet()) {
                str(out, e.getKey());
                out.writeInt(e.getValue().length);
                out.write(e.getValue());
            }
        }
        System.out.printf("{\"done\": true, \"racks\": %b, \"calls\": %d}%n", infos != null, done);
    }

    /** The collectors' accumulated collection time so far, in milliseconds. */
    private static long gcMillis() {
        long total = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            total += Math.max(0, gc.getCollectionTime());
        }
        return total;
    }

    /** Assign a two-member group once, so class loading and static set-up are not timed. */
    private static void warmUp(String protocol) {
        Map<String, Subscription> subs = new HashMap<>();
        subs.put("a", new Subscription(List.of("w"), null, List.of(), 1, Optional.empty()));
        subs.put("b", new Subscription(List.of("w"), null, List.of(), 1, Optional.empty()));
        Map<String, List<TopicPartition>> plan = assignor(protocol).assign(Map.of("w", 4), subs);
        for (List<TopicPartition> tps : plan.values()) {
            ConsumerProtocol.serializeAssignment(new Assignment(tps));
        }
        ConsumerProtocol.deserializeSubscription(
            ConsumerProtocol.serializeSubscription(subs.get("a")));
    }
}
