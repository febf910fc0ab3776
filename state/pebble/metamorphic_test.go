package pebble_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/heap"
	"github.com/weirstream/weir/state/pebble"
)

// The metamorphic test runs the same random operations — values, lists,
// maps, reducing and aggregating state, with and without TTL on a fake
// clock, CleanupExpired, Keys, snapshots written after later writes,
// restores at another parallelism, restores across backends — on the heap
// backend and on the Pebble backend, and requires identical reads and
// identical restored state. Each seed is a few hundred operations.

const metaMaxPar = 16

func ttlOf(ms int64, onRead bool) *state.TTLConfig {
	c := &state.TTLConfig{TTL: time.Duration(ms) * time.Millisecond}
	if onRead {
		c.UpdateType = state.OnReadAndWrite
	}
	return c
}

type avgAcc struct{ Sum, Count int64 }

type sumAvg struct{}

func (sumAvg) CreateAccumulator() avgAcc    { return avgAcc{} }
func (sumAvg) Add(v int64, a avgAcc) avgAcc { a.Sum += v; a.Count++; return a }
func (sumAvg) GetResult(a avgAcc) string    { return fmt.Sprintf("%d/%d", a.Sum, a.Count) }
func (sumAvg) Merge(a, b avgAcc) avgAcc     { return avgAcc{a.Sum + b.Sum, a.Count + b.Count} }
func sum(a, b int64) int64                  { return a + b }
func values(b state.KeyedBackend, n string, t *state.TTLConfig) state.ValueState[int64] {
	return state.Value(b, state.ValueDescriptor[int64]{Name: n, TTL: t})
}

// Every state of the test: its name, and what reading it prints.
var stateNames = []string{"v", "vt", "l", "lt", "m", "mt", "r", "rt", "a"}

// ttls: "vt" expires on write only, "lt" and "mt" refresh on read too.
// Pebble sweeps them after every few entries written (heap ignores it),
// "rt" only at the cleanup ticks and reads.
var ttls = map[string]*state.TTLConfig{
	"vt": sweptAfter(ttlOf(20, false), 3), "lt": sweptAfter(ttlOf(15, true), 2), "mt": sweptAfter(ttlOf(25, true), 5),
	"rt": sweptAfter(ttlOf(10, false), -1),
}

func sweptAfter(c *state.TTLConfig, entries int64) *state.TTLConfig {
	c.QueryTimeAfterNumEntries = entries
	return c
}

func list(b state.KeyedBackend, n string) state.ListState[string] {
	return state.List(b, state.ListDescriptor[string]{Name: n, TTL: ttls[n]})
}

func mapst(b state.KeyedBackend, n string) state.MapState[string, int64] {
	return state.Map(b, state.MapDescriptor[string, int64]{Name: n, TTL: ttls[n]})
}

func reducing(b state.KeyedBackend, n string) state.ReducingState[int64] {
	return state.Reducing(b, state.ReducingDescriptor[int64]{Name: n, ReduceFunc: sum, TTL: ttls[n]})
}

func aggregating(b state.KeyedBackend) state.AggregatingState[int64, string] {
	return state.Aggregating(b, state.AggregatingDescriptor[int64, avgAcc, string]{Name: "a", AggregateFunc: sumAvg{}})
}

// read prints the current key's content of state n (and, for TTL states,
// refreshes or expires it as any read does).
func read(b state.KeyedBackend, n string) string {
	switch n {
	case "v", "vt":
		v, ok := values(b, n, ttls[n]).Value()
		return fmt.Sprint(v, ok)
	case "l", "lt":
		l := list(b, n)
		got := l.Get()
		if app := l.AppendTo([]string{"pre"}); !slices.Equal(app, append([]string{"pre"}, got...)) {
			return fmt.Sprintf("Get %v, AppendTo [pre] %v", got, app)
		}
		return fmt.Sprint(got)
	case "m", "mt":
		m := mapst(b, n)
		var es []string
		m.Range(func(k string, v int64) bool { es = append(es, fmt.Sprintf("%s=%d", k, v)); return true })
		slices.Sort(es)
		return fmt.Sprint(es, m.IsEmpty())
	case "r", "rt":
		v, ok := reducing(b, n).Get()
		return fmt.Sprint(v, ok)
	case "a":
		v, ok := aggregating(b).Get()
		return fmt.Sprint(v, ok)
	}
	panic(n)
}

// world is one job's subtasks of one keyed operator on one backend type.
type world struct {
	pebble bool
	dir    string
	clock  *int64
	bs     []state.KeyedBackend
}

func newWorld(t *testing.T, usePebble bool, dir string, clock *int64, par int, blobs [][]byte) *world {
	t.Helper()
	return newWorldFrom(t, usePebble, dir, clock, par, blobs, nil)
}

// newWorldFrom is newWorld whose Pebble backends have incremental
// checkpoints and restore their files from store, when it is not nil.
func newWorldFrom(t *testing.T, usePebble bool, dir string, clock *int64, par int, blobs [][]byte, store *fakeStore) *world {
	t.Helper()
	w := &world{pebble: usePebble, dir: dir, clock: clock}
	for i := range par {
		spec := state.BackendSpec{Operator: "op", Subtask: i, KeyGroupRange: keygroup.RangeFor(metaMaxPar, par, i),
			MaxParallelism: metaMaxPar, KeyCodec: state.AnyCodec{}, Clock: func() int64 { return *clock }}
		var f state.BackendFactory = heap.Factory{}
		if usePebble {
			f = pebble.Factory{Options: pebble.Options{LocalDir: dir, WriteBufferSize: 256 << 10, BlockCacheSize: 1 << 20,
				DisableIncremental: store == nil}}
		}
		if store != nil {
			spec.Files = store
		}
		b, err := f.NewKeyedBackend(spec)
		if err != nil {
			t.Fatal(err)
		}
		if blobs != nil {
			if err := b.Restore(blobs); err != nil {
				t.Fatal(err)
			}
		}
		w.bs = append(w.bs, b)
	}
	return w
}

func (w *world) close() {
	for _, b := range w.bs {
		if c, ok := b.(interface{ Close() error }); ok {
			_ = c.Close()
		}
	}
}

// at sets key as the current key on its subtask and returns the backend.
func (w *world) at(key any) state.KeyedBackend {
	kg := keygroup.ForKey(key, metaMaxPar)
	b := w.bs[keygroup.OperatorIndex(kg, metaMaxPar, len(w.bs))]
	b.SetCurrentKey(key, kg)
	return b
}

// keys prints the sorted keys of state n over every subtask.
func (w *world) keys(n string) string {
	var ks []string
	for _, b := range w.bs {
		for _, k := range b.Keys(n) {
			ks = append(ks, fmt.Sprint(k))
		}
	}
	slices.Sort(ks)
	return fmt.Sprint(ks)
}

// dump prints every state of every key (it reads, so TTL states may be
// refreshed or expired, the same way in both worlds), then each state's
// keys. Reading first registers every state: the keys of a restored state
// not registered yet are not compared, since an incremental checkpoint
// ships its SSTs as they are, with entries that had expired when it was
// taken (a canonical snapshot leaves them out); a registered state's TTL
// hides them.
func (w *world) dump() string {
	var sb strings.Builder
	for k := range metaKeys {
		for _, n := range stateNames {
			fmt.Fprintf(&sb, "%v.%s=%s ", k, n, read(w.at(key(k)), n))
		}
		sb.WriteByte('\n')
	}
	for _, n := range stateNames {
		fmt.Fprintf(&sb, "%s keys %s\n", n, w.keys(n))
	}
	return sb.String()
}

type pending struct{ snaps []state.Snapshot }

func (w *world) snapshot(t *testing.T) pending {
	var p pending
	for _, b := range w.bs {
		s, err := b.Snapshot(*w.clock)
		if err != nil {
			t.Fatal(err)
		}
		p.snaps = append(p.snaps, s)
	}
	return p
}

// write writes the snapshots: as canonical blobs, or, with a store, as
// incremental checkpoint files and their manifests.
func (p pending) write(t *testing.T, store *fakeStore) [][]byte {
	var blobs [][]byte
	for _, s := range p.snaps {
		if store != nil {
			m, _, _ := store.writeFiles(t, s)
			blobs = append(blobs, m)
			continue
		}
		blob, err := s.Write()
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, blob)
	}
	return blobs
}

const metaKeys = 12

// key returns test key k: strings and ints, so the key codec sees types.
func key(k int) any {
	if k%3 == 0 {
		return k
	}
	return fmt.Sprintf("k%d", k)
}

// op applies one random operation to both worlds and returns what each read.
func op(rng *rand.Rand, h, p *world) (string, string, string) {
	k := key(rng.IntN(metaKeys))
	n := stateNames[rng.IntN(len(stateNames))]
	x := rng.Int64N(100)
	uk := fmt.Sprintf("u%d", rng.IntN(4))
	var what string
	do := func(w *world) string {
		b := w.at(k)
		switch rng2 := x % 8; {
		case n == "v" || n == "vt":
			what = fmt.Sprintf("%v.%s value op %d", k, n, rng2)
			s := values(b, n, ttls[n])
			switch rng2 {
			case 0:
				s.Clear()
			case 1, 2, 3:
				s.Update(x)
			}
		case n == "l" || n == "lt":
			what = fmt.Sprintf("%v.%s list op %d", k, n, rng2)
			s := list(b, n)
			switch rng2 {
			case 0:
				s.Clear()
			case 1, 2:
				s.Add(fmt.Sprint(x))
			case 3:
				s.AddAll([]string{fmt.Sprint(x), "y"})
			case 4:
				s.Update([]string{fmt.Sprint(x)})
			case 5:
				s.Update(nil)
			}
		case n == "m" || n == "mt":
			what = fmt.Sprintf("%v.%s[%s] map op %d", k, n, uk, rng2)
			s := mapst(b, n)
			switch rng2 {
			case 0:
				s.Clear()
			case 1, 2, 3:
				s.Put(uk, x)
			case 4:
				s.Remove(uk)
			case 5:
				v, ok := s.Get(uk)
				return fmt.Sprint(v, ok)
			case 6:
				return fmt.Sprint(s.Contains(uk))
			}
		case n == "r" || n == "rt":
			what = fmt.Sprintf("%v.%s reducing op %d", k, n, rng2)
			switch rng2 {
			case 0:
				reducing(b, n).Clear()
			case 1, 2, 3, 4:
				reducing(b, n).Add(x)
			}
		default:
			what = fmt.Sprintf("%v.a aggregating op %d", k, rng2)
			switch rng2 {
			case 0:
				aggregating(b).Clear()
			case 1, 2, 3, 4:
				aggregating(b).Add(x)
			}
		}
		return read(b, n)
	}
	return what, do(h), do(p)
}

func TestMetamorphicHeapPebble(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { runMetamorphic(t, seed, 300, false) })
	}
}

// TestMetamorphicHeapPebbleIncremental is the metamorphic test with the
// Pebble backend's incremental checkpoints: its snapshots are written as
// files and manifests and restored from them (at other parallelisms too),
// except those restored across backends, written canonically as a
// savepoint is.
func TestMetamorphicHeapPebbleIncremental(t *testing.T) {
	seeds := 3 // each restore opens Pebble on fetched files: slower than the canonical test's
	if testing.Short() {
		seeds = 2
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { runMetamorphic(t, seed, 300, true) })
	}
}

func runMetamorphic(t *testing.T, seed uint64, ops int, incremental bool) {
	rng := rand.New(rand.NewPCG(seed, 7))
	dir := t.TempDir()
	clock := int64(1_000)
	par := 1 + rng.IntN(3)
	var store *fakeStore
	if incremental {
		store = newFakeStore(t)
	}
	h, p := newWorld(t, false, dir, &clock, par, nil), newWorldFrom(t, true, dir, &clock, par, nil, store)
	var inFlight []pending // heap, pebble: snapshots taken, not yet written
	for i := range ops {
		var what, hr, pr string
		switch c := rng.IntN(100); {
		case c < 80:
			what, hr, pr = op(rng, h, p)
		case c < 86:
			clock += rng.Int64N(8)
			what = fmt.Sprintf("clock → %d", clock)
		case c < 89:
			n := stateNames[rng.IntN(len(stateNames))]
			what, hr, pr = "keys "+n, h.keys(n), p.keys(n)
		case c < 92:
			m := 1 + rng.IntN(20)
			what = fmt.Sprintf("cleanup %d", m)
			for _, w := range []*world{h, p} {
				for _, b := range w.bs {
					b.CleanupExpired(m)
				}
			}
		case c < 95 && len(inFlight) == 0:
			what = "snapshot"
			inFlight = []pending{h.snapshot(t), p.snapshot(t)}
		case c < 100 && len(inFlight) == 2:
			newPar := 1 + rng.IntN(4)
			cross := rng.IntN(3) == 0
			what = fmt.Sprintf("restore at parallelism %d (cross %v)", newPar, cross)
			files := store
			if cross {
				files = nil // a savepoint
			}
			hb, pb := inFlight[0].write(t, nil), inFlight[1].write(t, files)
			inFlight = nil
			if cross {
				hb, pb = pb, hb
			}
			h.close()
			p.close()
			h, p = newWorld(t, false, dir, &clock, newPar, hb), newWorldFrom(t, true, dir, &clock, newPar, pb, store)
			hr, pr = h.dump(), p.dump()
		default:
			what = "noop"
		}
		if hr != pr {
			t.Fatalf("op %d (%s): heap read\n%s\npebble read\n%s", i, what, hr, pr)
		}
	}
	if inFlight != nil {
		inFlight[0].write(t, nil)
		inFlight[1].write(t, store)
	}
	if hd, pd := h.dump(), p.dump(); hd != pd {
		t.Fatalf("final state differs: heap\n%s\npebble\n%s", hd, pd)
	}
	h.close()
	p.close()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("closed Pebble backends left %d entries in the local dir: %v", len(ents), ents)
	}
}
