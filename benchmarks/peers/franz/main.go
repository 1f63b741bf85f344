// Command franz-peer is the franz-go peer of `make bench`: it runs franz-go's own public
// sticky or cooperative-sticky GroupBalancer on the JoinGroup member metadata bytes that
// benchmarks/run.py wrote (the exact bytes our leader gets) and writes back each member's
// SyncGroup assignment bytes as franz-go encodes them.
//
// Usage: franz-peer PROTOCOL INPUT OUTPUT [CALLS [BUDGET_S]]
//
// PROTOCOL is "sticky" or "cooperative-sticky". INPUT and OUTPUT use the framing described in
// docs/benchmarks.md (big-endian, Kafka-style int16/int32 lengths). Up to CALLS calls (default
// 1) run in this one process, the first cold, the later warm; after the first two (the cold
// call and one warm one), no further call starts once the calls so far took BUDGET_S seconds. Before each call one line {"begin": i}
// is printed (the caller's time limit runs from it), after it one JSON line with:
//
//   - decode_s: MemberBalancer (franz-go decodes every member's metadata),
//   - assign_s: Balance (BalanceOrError on the ConsumerBalancer; for cooperative-sticky this
//     includes franz-go's own AdjustCooperative),
//   - encode_s: IntoSyncAssignment (the SyncGroup assignment bytes),
//   - cpu_s: the process's user + system CPU seconds over the call (getrusage),
//   - gc_s: the runtime's GC CPU seconds over the call (/cpu/classes/gc/total:cpu-seconds,
//     an estimate the runtime keeps).
//
// The last call's assignment is written to OUTPUT, then {"done": true, ...} is printed.
//
// franz-go takes partition racks only from its own client's metadata (no public way to give
// them to a GroupBalancer), so replica racks in INPUT are ignored: "racks" is false in the
// JSON line.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type reader struct {
	r   *bufio.Reader
	err error
}

func (r *reader) n(size int) []byte {
	buf := make([]byte, size)
	if r.err == nil {
		_, r.err = io.ReadFull(r.r, buf)
	}
	return buf
}

func (r *reader) i16() int    { return int(int16(binary.BigEndian.Uint16(r.n(2)))) }
func (r *reader) i32() int    { return int(int32(binary.BigEndian.Uint32(r.n(4)))) }
func (r *reader) str() string { return string(r.n(r.i16())) }

type input struct {
	counts  map[string]int32
	members []kmsg.JoinGroupResponseMember
	racked  bool
}

func readInput(path string) (*input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &reader{r: bufio.NewReaderSize(f, 1<<20)}
	if magic := string(r.n(4)); r.err == nil && magic != "KSB1" {
		return nil, fmt.Errorf("%s: not a bench input (magic %q)", path, magic)
	}
	in := &input{counts: map[string]int32{}}
	topics := make([]string, r.i32())
	for i := range topics {
		topics[i] = r.str()
		in.counts[topics[i]] = int32(r.i32())
	}
	in.members = make([]kmsg.JoinGroupResponseMember, r.i32())
	for i := range in.members {
		m := kmsg.NewJoinGroupResponseMember()
		m.MemberID = r.str()
		m.ProtocolMetadata = r.n(r.i32())
		in.members[i] = m
	}
	in.racked = r.i32() > 0 // replica racks follow; franz-go cannot take them
	return in, r.err
}

func writeOutput(path string, sync []kmsg.SyncGroupRequestGroupAssignment) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(len(sync)))
	w.Write(b[:])
	for _, a := range sync {
		binary.BigEndian.PutUint16(b[:2], uint16(len(a.MemberID)))
		w.Write(b[:2])
		w.WriteString(a.MemberID)
		binary.BigEndian.PutUint32(b[:], uint32(len(a.MemberAssignment)))
		w.Write(b[:])
		w.Write(a.MemberAssignment)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func run() error {
	if len(os.Args) < 4 {
		return fmt.Errorf("usage: %s sticky|cooperative-sticky INPUT OUTPUT [REPEAT]", os.Args[0])
	}
	var balancer kgo.GroupBalancer
	switch os.Args[1] {
	case "sticky":
		balancer = kgo.StickyBalancer()
	case "cooperative-sticky":
		balancer = kgo.CooperativeStickyBalancer()
	default:
		return fmt.Errorf("unknown protocol %q", os.Args[1])
	}
	calls := 1
	if len(os.Args) > 4 {
		n, err := strconv.Atoi(os.Args[4])
		if err != nil || n < 1 {
			return fmt.Errorf("bad CALLS %q", os.Args[4])
		}
		calls = n
	}
	budget := -1.0
	if len(os.Args) > 5 {
		b, err := strconv.ParseFloat(os.Args[5], 64)
		if err != nil {
			return fmt.Errorf("bad BUDGET_S %q", os.Args[5])
		}
		budget = b
	}
	in, err := readInput(os.Args[2])
	if err != nil {
		return err
	}
	// The client hands MemberBalancer members sorted by instance id, then member id.
	sort.Slice(in.members, func(i, j int) bool { return in.members[i].MemberID < in.members[j].MemberID })
	var sync []kmsg.SyncGroupRequestGroupAssignment
	spent, done := 0.0, 0
	for run := 0; run < calls && (run < 2 || budget < 0 || spent < budget); run++ {
		sync = nil
		fmt.Printf("{\"begin\": %d}\n", run)
		gc0, cpu0 := gcSeconds(), cpuSeconds()
		start := time.Now()
		mb, interests, err := balancer.MemberBalancer(in.members)
		if err != nil {
			return err
		}
		decoded := time.Now()
		// What the client looks up in its metadata: counts for the topics members name.
		counts := make(map[string]int32, len(interests))
		for t := range interests {
			if c, ok := in.counts[t]; ok {
				counts[t] = c
			}
		}
		begin := time.Now()
		var into kgo.IntoSyncAssignment
		if withErr, ok := mb.(kgo.GroupMemberBalancerOrError); ok {
			if into, err = withErr.BalanceOrError(counts); err != nil {
				return err
			}
		} else {
			into = mb.Balance(counts)
		}
		balanced := time.Now()
		sync = into.IntoSyncAssignment()
		encoded := time.Now()
		cpu1, gc1 := cpuSeconds(), gcSeconds()
		spent += encoded.Sub(start).Seconds()
		done++
		line, _ := json.Marshal(map[string]any{
			"call": run, "decode_s": decoded.Sub(start).Seconds(),
			"assign_s": balanced.Sub(begin).Seconds(), "encode_s": encoded.Sub(balanced).Seconds(),
			"cpu_s": cpu1 - cpu0, "gc_s": gc1 - gc0,
		})
		fmt.Println(string(line))
	}
	if err := writeOutput(os.Args[3], sync); err != nil {
		return err
	}
	line, _ := json.Marshal(map[string]any{"done": true, "racks": false, "calls": done})
	fmt.Println(string(line))
	return nil
}

// cpuSeconds is the process's user + system CPU time so far.
func cpuSeconds() float64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return float64(u.Utime.Nano()+u.Stime.Nano()) / 1e9
}

// gcSeconds is the runtime's estimate of the CPU time its garbage collector used so far.
func gcSeconds() float64 {
	sample := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return sample[0].Value.Float64()
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "franz-peer:", err)
		os.Exit(1)
	}
}
