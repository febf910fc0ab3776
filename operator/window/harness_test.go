package window

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/heap"
)

// Test elements are strings "key:n"; the key is what precedes the colon.

const maxPar = 128

func keyOf(v any) any { k, _, _ := strings.Cut(v.(string), ":"); return k }

func parseElem(v any) (string, int64) {
	k, n, _ := strings.Cut(v.(string), ":")
	i, _ := strconv.ParseInt(n, 10, 64)
	return k, i
}

// sum is a Reduce: "a:1" + "a:2" = "a:3".
func sum(a, b any) any {
	k, x := parseElem(a)
	_, y := parseElem(b)
	return fmt.Sprintf("%s:%d", k, x+y)
}

// avgAcc is the accumulator of avg. It is a pointer that Add and Merge
// change in place, so a missing copy-before-write shows up under -race and
// in snapshot/restore comparisons.
type avgAcc struct{ Sum, N int64 }

type avg struct{}

func (avg) CreateAccumulator() any { return &avgAcc{} }
func (avg) Add(v, acc any) any {
	_, n := parseElem(v)
	a := acc.(*avgAcc)
	a.Sum, a.N = a.Sum+n, a.N+1
	return a
}
func (avg) GetResult(acc any) any {
	a := acc.(*avgAcc)
	return fmt.Sprintf("sum=%d n=%d", a.Sum, a.N)
}
func (avg) Merge(a, b any) any {
	x, y := a.(*avgAcc), b.(*avgAcc)
	x.Sum, x.N = x.Sum+y.Sum, x.N+y.N
	return x
}

type avgCodec struct{}

func (avgCodec) Encode(buf []byte, v any) []byte {
	a := v.(*avgAcc)
	return binary.AppendVarint(binary.AppendVarint(buf, a.Sum), a.N)
}

func (avgCodec) Decode(b []byte) (any, []byte, error) {
	s, k := binary.Varint(b)
	if k <= 0 {
		return nil, b, state.ErrCorrupt
	}
	n, k2 := binary.Varint(b[k:])
	if k2 <= 0 {
		return nil, b, state.ErrCorrupt
	}
	return &avgAcc{Sum: s, N: n}, b[k+k2:], nil
}

// list is a Process function: "key [start, end) n1 n2 …" in state order.
func list(key any, w Window, elems []any, out *operator.Collector) error {
	ns := make([]string, len(elems))
	for i, e := range elems {
		_, n := parseElem(e)
		ns[i] = strconv.FormatInt(n, 10)
	}
	out.Collect(fmt.Sprintf("%v %v %s", key, w, strings.Join(ns, " ")))
	return nil
}

// withFn sets the window function named fn: sum, avg or list.
func withFn(t testing.TB, opts Options, fn string) Options {
	switch fn {
	case "sum":
		opts.Reduce = sum
	case "avg":
		opts.Aggregate, opts.Codec = avg{}, avgCodec{}
	case "list":
		opts.Process = list
	default:
		t.Fatalf("unknown fn %q", fn)
	}
	return opts
}

// recorder is an operator.Output that prints what it receives.
type recorder struct{ lines []string }

func (r *recorder) Collect(rec event.Record) {
	r.lines = append(r.lines, fmt.Sprintf("emit %v @%d", rec.Value, rec.Timestamp))
}

func (r *recorder) CollectSide(tag string, rec event.Record) {
	r.lines = append(r.lines, fmt.Sprintf("side %s %v @%d", tag, rec.Value, rec.Timestamp))
}

func (r *recorder) EmitWatermark(wm event.Timestamp) {
	r.lines = append(r.lines, fmt.Sprintf("watermark %d", wm))
}

// take returns and forgets what was recorded.
func (r *recorder) take() []string {
	l := r.lines
	r.lines = nil
	return l
}

// instance is one subtask of the window operator with its own heap backend
// and timer service, driven directly as the runtime would.
type instance struct {
	op  *Operator
	ctx *operator.Context
	out *recorder
}

// openInstance builds an operator for key groups kgr, restored from parts
// when parts is not nil.
func openInstance(t testing.TB, opts Options, kgr keygroup.Range, parts map[string][][]byte) *instance {
	t.Helper()
	keyed, err := heap.New(heap.Options{KeyGroupRange: kgr, MaxParallelism: maxPar})
	if err != nil {
		t.Fatal(err)
	}
	op, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	out := &recorder{}
	ctx := &operator.Context{
		UID: "window", Parallelism: 1, MaxParallelism: maxPar, Output: out, Keyed: keyed,
		Timers:  operator.NewTimerService(keyed, state.AnyCodec{}, maxPar),
		Metrics: &operator.Metrics{}, Now: func() int64 { return 0 }, KeySelector: keyOf,
		Restored: parts != nil,
	}
	if parts != nil {
		if err := op.InitializeState(parts); err != nil {
			t.Fatal(err)
		}
	}
	if err := op.Open(ctx); err != nil {
		t.Fatal(err)
	}
	return &instance{op: op, ctx: ctx, out: out}
}

func (in *instance) element(t testing.TB, v string, ts int64) {
	t.Helper()
	if err := in.op.ProcessElement(event.Record{Value: v, Timestamp: ts}); err != nil {
		t.Fatal(err)
	}
}

func (in *instance) watermark(t testing.TB, wm int64) {
	t.Helper()
	if err := in.op.ProcessWatermark(wm); err != nil {
		t.Fatal(err)
	}
}

// snapshot takes a snapshot and returns a function that writes its parts;
// the caller may run it concurrently with further processing, as the
// runtime does.
func (in *instance) snapshot(t testing.TB) func() (map[string][]byte, error) {
	t.Helper()
	parts, err := in.op.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	return func() (map[string][]byte, error) {
		out := map[string][]byte{}
		for _, p := range parts {
			b, err := p.Snap.Write()
			if err != nil {
				return nil, fmt.Errorf("writing part %s: %w", p.Name, err)
			}
			out[p.Name] = b
		}
		return out, nil
	}
}

// writeAsync runs write on another goroutine and returns a wait function.
func writeAsync(write func() (map[string][]byte, error)) func() (map[string][]byte, error) {
	var wg sync.WaitGroup
	var blobs map[string][]byte
	var err error
	wg.Add(1)
	go func() { defer wg.Done(); blobs, err = write() }()
	return func() (map[string][]byte, error) { wg.Wait(); return blobs, err }
}

// gather turns the blobs of old subtasks into InitializeState's argument.
func gather(subtasks ...map[string][]byte) map[string][][]byte {
	parts := map[string][][]byte{}
	for _, s := range subtasks {
		for _, name := range slices.Sorted(maps.Keys(s)) {
			parts[name] = append(parts[name], s[name])
		}
	}
	return parts
}
