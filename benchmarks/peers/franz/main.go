// Command franz-peer is the franz-go peer of `make bench`: it runs franz-go's own public
// sticky or cooperative-sticky GroupBalancer on the JoinGroup member metadata bytes that
// benchmarks/run.py wrote (the exact bytes our leader gets) and writes back each member's
// SyncGroup assignment bytes as franz-go encodes them.
//
// Usage: franz-peer PROTOCOL INPUT OUTPUT [REPEAT]
//
// PROTOCOL is "sticky" or "cooperative-sticky". INPUT and OUTPUT use the framing described in
// docs/benchmarks.md (big-endian, Kafka-style int16/int32 lengths). One JSON line on stdout
// gives the best of REPEAT runs (default 1) of each timed step:
//
//   - decode_s: MemberBalancer (franz-go decodes every member's metadata),
//   - assign_s: Balance (BalanceOrError on the ConsumerBalancer; for cooperative-sticky this
//     includes franz-go's own AdjustCooperative),
//   - encode_s: IntoSyncAssignment (the SyncGroup assignment bytes).
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
	"sort"
	"strconv"
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
	repeat := 1
	if len(os.Args) > 4 {
		n, err := strconv.Atoi(os.Args[4])
		if err != nil || n < 1 {
			return fmt.Errorf("bad REPEAT %q", os.Args[4])
		}
		repeat = n
	}
	in, err := readInput(os.Args[2])
	if err != nil {
		return err
	}
	// The client hands MemberBalancer members sorted by instance id, then member id.
	sort.Slice(in.members, func(i, j int) bool { return in.members[i].MemberID < in.members[j].MemberID })
	best := [3]float64{-1, -1, -1}
	keep := func(i int, d time.Duration) {
		if s := d.Seconds(); best[i] < 0 || s < best[i] {
			best[i] = s
		}
	}
	var sync []kmsg.SyncGroupRequestGroupAssignment
	for range repeat {
		sync = nil
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
		keep(0, decoded.Sub(start))
		keep(1, balanced.Sub(begin))
		keep(2, encoded.Sub(balanced))
	}
	if err := writeOutput(os.Args[3], sync); err != nil {
		return err
	}
	line, _ := json.Marshal(map[string]any{
		"decode_s": best[0], "assign_s": best[1], "encode_s": best[2],
		"racks": false, "repeat": repeat,
	})
	fmt.Println(string(line))
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "franz-peer:", err)
		os.Exit(1)
	}
}
