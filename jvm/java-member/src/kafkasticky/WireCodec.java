package kafkasticky;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor.MemberData;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;

/**
 * A persistent wire-codec server on the Java client's own classes, for the unit tier's
 * cross-check against kafka_sticky_plugin.codec: one JSON request per stdin line, one JSON
 * answer per stdout line ({"ok":true,...} or {"ok":false,"error":...}); bytes travel as hex.
 *
 * <p>Requests ("op"): encode_subscription / decode_subscription (ConsumerProtocol, v0-v3),
 * encode_assignment / decode_assignment, encode_sticky_user_data / decode_sticky_user_data
 * (StickyAssignor's onAssignment + subscriptionUserData, and its memberData),
 * encode_cooperative_user_data / decode_cooperative_user_data (CooperativeStickyAssignor's).
 * Only public and protected API is used (the decoders through subclasses).
 */
public final class WireCodec {
    private WireCodec() {
    }

    /** StickyAssignor with its protected user-data decoder made reachable. */
    static final class Sticky extends StickyAssignor {
        MemberData decode(Subscription subscription) {
            return memberData(subscription);
        }
    }

    /** CooperativeStickyAssignor with its protected user-data decoder made reachable. */
    static final class Cooperative extends CooperativeStickyAssignor {
        MemberData decode(Subscription subscription) {
            return memberData(subscription);
        }
    }

    private static String hex(ByteBuffer buffer) {
        if (buffer == null) {
            return null;
        }
        ByteBuffer b = buffer.duplicate();
        StringBuilder out = new StringBuilder();
        while (b.hasRemaining()) {
            out.append(String.format("%02x", b.get() & 0xff));
        }
        return out.toString();
    }

    private static ByteBuffer bytes(Object hex) {
        if (hex == null) {
            return null;
        }
        String s = (String) hex;
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return ByteBuffer.wrap(out);
    }

    private static List<TopicPartition> partitions(Object raw) {
        List<TopicPartition> out = new ArrayList<>();
        if (raw != null) {
            for (Object item : (List<?>) raw) {
                List<?> pair = (List<?>) item;
                out.add(new TopicPartition((String) pair.get(0), (int) Json.asLong(pair.get(1))));
            }
        }
        return out;
    }

    /** Partitions in the order the Java object holds them (wire order after a decode). */
    private static List<Object> pairs(List<TopicPartition> parts) {
        List<Object> out = new ArrayList<>();
        for (TopicPartition tp : parts) {
            List<Object> pair = new ArrayList<>();
            pair.add(tp.topic());
            pair.add((long) tp.partition());
            out.add(pair);
        }
        return out;
    }

    private static List<String> strings(Object raw) {
        List<String> out = new ArrayList<>();
        for (Object item : (List<?>) raw) {
            out.add((String) item);
        }
        return out;
    }

    private static Object generation(Optional<Integer> g) {
        return g.isPresent() ? (Object) (long) g.get() : null;
    }

    @SuppressWarnings("removal") // the only public way to make one with a generation
    private static ConsumerGroupMetadata metadata(int generation) {
        return new ConsumerGroupMetadata("g", generation, "m", Optional.empty());
    }

    static Map<String, Object> handle(Map<String, Object> req) {
        Map<String, Object> out = new LinkedHashMap<>();
        String op = (String) req.get("op");
        switch (op) {
            case "encode_subscription": {
                Object rack = req.get("rack");
                Subscription s = new Subscription(strings(req.get("topics")),
                        bytes(req.get("user_data")), partitions(req.get("owned")),
                        (int) Json.asLong(req.get("generation")),
                        Optional.ofNullable((String) rack));
                out.put("hex", hex(ConsumerProtocol.serializeSubscription(s,
                        (short) Json.asLong(req.get("version")))));
                break;
            }
            case "decode_subscription": {
                ByteBuffer b = bytes(req.get("hex"));
                short version = ConsumerProtocol.deserializeVersion(b.duplicate());
                Subscription s = ConsumerProtocol.deserializeSubscription(b);
                out.put("version", (long) version);
                out.put("topics", new ArrayList<Object>(s.topics()));
                out.put("user_data", hex(s.userData()));
                out.put("owned", pairs(s.ownedPartitions()));
                out.put("generation", generation(s.generationId()));
                out.put("rack", s.rackId().orElse(null));
                break;
            }
            case "encode_assignment": {
                Assignment a = new Assignment(partitions(req.get("partitions")),
                        bytes(req.get("user_data")));
                out.put("hex", hex(ConsumerProtocol.serializeAssignment(a,
                        (short) Json.asLong(req.get("version")))));
                break;
            }
            case "decode_assignment": {
                Assignment a = ConsumerProtocol.deserializeAssignment(bytes(req.get("hex")));
                out.put("partitions", pairs(a.partitions()));
                out.put("user_data", hex(a.userData()));
                break;
            }
            case "encode_sticky_user_data": {
                Sticky sticky = new Sticky();
                List<TopicPartition> parts = partitions(req.get("partitions"));
                sticky.onAssignment(new Assignment(parts),
                        metadata((int) Json.asLong(req.get("generation"))));
                HashSet<String> topics = new HashSet<>();
                for (TopicPartition tp : parts) {
                    topics.add(tp.topic());
                }
                out.put("hex", hex(sticky.subscriptionUserData(topics)));
                break;
            }
            case "decode_sticky_user_data": {
                MemberData data = new Sticky().decode(new Subscription(Collections.emptyList(),
                        bytes(req.get("hex"))));
                out.put("partitions", pairs(data.partitions));
                out.put("generation", generation(data.generation));
                break;
            }
            case "encode_cooperative_user_data": {
                Cooperative cooperative = new Cooperative();
                cooperative.onAssignment(new Assignment(Collections.emptyList()),
                        metadata((int) Json.asLong(req.get("generation"))));
                out.put("hex", hex(cooperative.subscriptionUserData(Collections.emptySet())));
                break;
            }
            case "decode_cooperative_user_data": {
                MemberData data = new Cooperative().decode(new Subscription(
                        Collections.emptyList(), bytes(req.get("hex")),
                        partitions(req.get("owned"))));
                out.put("partitions", pairs(data.partitions));
                out.put("generation", generation(data.generation));
                break;
            }
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
        out.put("ok", true);
        return out;
    }

    /** Serve requests until stdin closes. */
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
                StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, "US-ASCII");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            Map<String, Object> answer;
            try {
                @SuppressWarnings("unchecked")
                Map<String, Object> request = (Map<String, Object>) Json.parse(line);
                answer = handle(request);
            } catch (Exception exc) {
                answer = new LinkedHashMap<>();
                answer.put("ok", false);
                answer.put("error", exc.toString());
            }
            out.println(Json.write(answer));
            out.flush();
        }
    }
}
