package kafkasticky;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;

/**
 * The broker's own KIP-848 assignors (kafka-group-coordinator's UniformAssignor and
 * RangeAssignor) on group specs read from stdin, one JSON object a line, answered on stdout
 * one JSON line each, in one JVM for many specs:
 *
 * <pre>
 * in:  {"assignor": "uniform", "topics": [["t0", 6], ...],
 *       "members": [["m0", ["t0"], [["t0", 0], ...]], ...]}
 * out: {"ok": true, "homogeneous": true, "plan": {"m0": [["t0", 0], ...], ...}}
 *      {"ok": false, "error": "..."}
 * </pre>
 *
 * Members are a member id, its subscribed topics and its current target assignment.
 * Orders the broker leaves to hash maps are fixed here, as the simulator's models fix them
 * (kafka_sticky_plugin/simulate/kip848_assignors.py): memberIds() in the given (member id)
 * order, subscriptions and current assignments in topic order, partitions ascending, and
 * topic ids new Uuid(0, 2 + i) for the i-th topic of the given (name) order, so that id
 * order and the hash order of a set of ids are the name order; each request checks the
 * latter and fails rather than compare plans under another order.
 */
public final class BrokerAssignors {
    private BrokerAssignors() {
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            Map<String, Object> answer = new LinkedHashMap<>();
            try {
                answer = answer(line);
            } catch (RuntimeException e) {
                answer.put("ok", false);
                answer.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            out.println(Json.write(answer));
            out.flush();
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> answer(String line) {
        Map<String, Object> request = (Map<String, Object>) Json.parse(line);
        String name = (String) request.get("assignor");
        ConsumerGroupPartitionAssignor assignor;
        if ("uniform".equals(name)) {
            assignor = new UniformAssignor();
        } else if ("range".equals(name)) {
            assignor = new RangeAssignor();
        } else {
            throw new IllegalArgumentException("unknown assignor " + name);
        }

        Map<String, Uuid> ids = new LinkedHashMap<>();
        Map<Uuid, String> names = new HashMap<>();
        Map<Uuid, Integer> counts = new HashMap<>();
        for (Object raw : (List<Object>) request.get("topics")) {
            List<Object> topic = (List<Object>) raw;
            Uuid id = new Uuid(0L, 2L + ids.size());
            ids.put((String) topic.get(0), id);
            names.put(id, (String) topic.get(0));
            counts.put(id, (int) Json.asLong(topic.get(1)));
        }
        List<Uuid> inOrder = new ArrayList<>(ids.values());
        if (!new ArrayList<>(new HashSet<>(inOrder)).equals(inOrder)) {
            throw new IllegalStateException("topic id hash order is not the name order");
        }

        List<String> memberIds = new ArrayList<>();
        Map<String, MemberSubscription> subscriptions = new HashMap<>();
        Map<String, MemberAssignment> current = new HashMap<>();
        Map<Uuid, Set<Integer>> held = new HashMap<>();
        Set<Set<Uuid>> distinct = new HashSet<>();
        for (Object raw : (List<Object>) request.get("members")) {
            List<Object> member = (List<Object>) raw;
            String memberId = (String) member.get(0);
            Set<Uuid> topics = new LinkedHashSet<>();
            for (Object topic : (List<Object>) member.get(1)) {
                topics.add(ids.get((String) topic));
            }
            Map<Uuid, Set<Integer>> owned = new LinkedHashMap<>();
            for (Uuid id : inOrder) {
                owned.put(id, new TreeSet<>());
            }
            for (Object pair : (List<Object>) member.get(2)) {
                Uuid id = ids.get((String) ((List<Object>) pair).get(0));
                int partition = (int) Json.asLong(((List<Object>) pair).get(1));
                owned.get(id).add(partition);
                held.computeIfAbsent(id, k -> new HashSet<>()).add(partition);
            }
            owned.values().removeIf(Set::isEmpty);
            Map<Uuid, Set<Integer>> frozen = new LinkedHashMap<>();
            owned.forEach((id, partitions) -> frozen.put(id, Collections.unmodifiableSet(partitions)));
            Map<Uuid, Set<Integer>> assignment = Collections.unmodifiableMap(frozen);
            Set<Uuid> subscribed = Collections.unmodifiableSet(topics);
            memberIds.add(memberId);
            distinct.add(subscribed);
            subscriptions.put(memberId, new MemberSubscription() {
                @Override
                public Optional<String> rackId() {
                    return Optional.empty();
                }

                @Override
                public Optional<String> instanceId() {
                    return Optional.empty();
                }

                @Override
                public Set<Uuid> subscribedTopicIds() {
                    return subscribed;
                }
            });
            current.put(memberId, () -> assignment);
        }
        boolean homogeneous = distinct.size() <= 1;

        GroupSpec spec = new GroupSpec() {
            @Override
            public Collection<String> memberIds() {
                return Collections.unmodifiableList(memberIds);
            }

            @Override
            public SubscriptionType subscriptionType() {
                return homogeneous ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
            }

            @Override
            public boolean isPartitionAssigned(Uuid topicId, int partitionId) {
                return held.getOrDefault(topicId, Set.of()).contains(partitionId);
            }

            @Override
            public boolean isPartitionAssignable(Uuid topicId, int partitionId) {
                return true;
            }

            @Override
            public MemberSubscription memberSubscription(String memberId) {
                return subscriptions.get(memberId);
            }

            @Override
            public MemberAssignment memberAssignment(String memberId) {
                return current.get(memberId);
            }
        };
        SubscribedTopicDescriber describer = new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid topicId) {
                return counts.getOrDefault(topicId, -1);
            }

            @Override
            public Set<String> racksForPartition(Uuid topicId, int partition) {
                return Set.of();
            }
        };

        GroupAssignment result = assignor.assign(spec, describer);
        Map<String, Object> plan = new LinkedHashMap<>();
        for (String memberId : memberIds) {
            List<Object> pairs = new ArrayList<>();
            MemberAssignment assigned = result.members().get(memberId);
            if (assigned != null) {
                for (Uuid id : inOrder) {
                    for (int partition : new TreeSet<>(assigned.partitions().getOrDefault(id, Set.of()))) {
                        pairs.add(List.of(names.get(id), (long) partition));
                    }
                }
            }
            plan.put(memberId, pairs);
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("ok", true);
        answer.put("homogeneous", homogeneous);
        answer.put("plan", plan);
        return answer;
    }
}
