package heap

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
)

// handles are the states the snapshot and rescale tests use.
type handles struct {
	v state.ValueState[int]
	l state.ListState[int]
	m state.MapState[int, int]
	a state.AggregatingState[int64, float64]
}

func register(b *Backend) handles {
	return handles{
		v: state.Value(b, state.ValueDescriptor[int]{Name: "v"}),
		l: state.List(b, state.ListDescriptor[int]{Name: "l"}),
		m: state.Map(b, state.MapDescriptor[int, int]{Name: "m"}),
		a: state.Aggregating(b, state.AggregatingDescriptor[int64, *avgAcc, float64]{Name: "a", AggregateFunc: avg{}}),
	}
}

// contents reads every state of every key through the handles.
type contents struct {
	V map[int]int
	L map[int][]int
	M map[int]map[int]int
	A map[int]float64
}

func dump(b *Backend, h handles) contents {
	c := contents{map[int]int{}, map[int][]int{}, map[int]map[int]int{}, map[int]float64{}}
	for _, name := range []string{"v", "l", "m", "a"} {
		for _, k := range b.Keys(name) {
			at(b, k)
			key := k.(int)
			switch name {
			case "v":
				c.V[key], _ = h.v.Value()
			case "l":
				c.L[key] = h.l.Get()
			case "m":
				c.M[key] = collect(h.m)
			case "a":
				c.A[key], _ = h.a.Get()
			}
		}
	}
	return c
}

func populate(b *Backend, h handles, keys []int) {
	for _, k := range keys {
		at(b, k)
		h.v.Update(k * 10)
		h.l.AddAll([]int{k, k + 1})
		h.m.Put(k, -k)
		h.m.Put(0, 0)
		h.a.Add(int64(k))
	}
}

func span(from, to int) []int {
	var ks []int
	for k := from; k < to; k++ {
		ks = append(ks, k)
	}
	return ks
}

// TestSnapshotIsolation mutates every state while Write runs on another
// goroutine (run with -race): the blob must hold the state as of Snapshot.
func TestSnapshotIsolation(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	h := register(b)
	populate(b, h, span(0, 500))
	want := dump(b, h)
	s, err := b.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		blob []byte
		err  error
	}
	done := make(chan result)
	go func() {
		blob, err := s.Write()
		done <- result{blob, err}
	}()
	mutateEverything(b, h)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	r := restored(t, nil, res.blob)
	if got := dump(r, register(r)); !reflect.DeepEqual(got, want) {
		t.Fatal("blob does not hold the state as of Snapshot")
	}
	if got := dump(b, h); reflect.DeepEqual(got, want) {
		t.Fatal("live state did not change")
	}
}

// mutateEverything changes, in every way a handle can, the state of every
// key populate wrote, and adds keys.
func mutateEverything(b *Backend, h handles) {
	for k := range 500 {
		at(b, k)
		switch k % 4 {
		case 0:
			h.v.Update(-1)
			h.l.Add(-1)
			h.m.Put(k, 1)
			h.m.Remove(0)
			h.a.Add(1000)
		case 1:
			h.v.Clear()
			h.l.Update([]int{-2})
			h.m.Clear()
			h.a.Clear()
		case 2:
			h.l.Clear()
			h.m.Put(-1, -1)
			h.a.Add(-5)
		}
	}
	populate(b, h, span(500, 600))
}

func TestSnapshotOfEmptyBackend(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	r := restored(t, nil, snapshotBlob(t, b, 0), nil, []byte{})
	if got := dump(r, register(r)); len(got.V)+len(got.L)+len(got.M)+len(got.A) != 0 {
		t.Fatalf("restored %v", got)
	}
}

func TestWriteReportsCodecPanic(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	at(b, 1)
	state.Value(b, state.ValueDescriptor[any]{Name: "f"}).Update(func() {})
	s, _ := b.Snapshot(0)
	if _, err := s.Write(); err == nil || !strings.Contains(err.Error(), "writing keyed state snapshot") {
		t.Fatalf("Write = %v", err)
	}
}

// oldSubtasks builds parallelism backends, writes keys into the subtask
// owning each key's group, and returns their snapshot blobs.
func oldSubtasks(t *testing.T, parallelism int, keys []int) [][]byte {
	var blobs [][]byte
	olds := make([]*Backend, parallelism)
	hs := make([]handles, parallelism)
	for i := range olds {
		olds[i] = newSubtask(t, parallelism, i, nil)
		hs[i] = register(olds[i])
	}
	for _, k := range keys {
		i := keygroup.OperatorIndex(keyGroupOf(k), maxPar, parallelism)
		populate(olds[i], hs[i], []int{k})
	}
	for _, o := range olds {
		blobs = append(blobs, snapshotBlob(t, o, 0))
	}
	return blobs
}

func TestRestoreRescale(t *testing.T) {
	keys := span(0, 1000)
	for _, c := range []struct{ from, to int }{{2, 3}, {3, 1}, {1, 4}, {4, 2}, {3, 3}} {
		blobs := oldSubtasks(t, c.from, keys)
		for idx := range c.to {
			nb := newSubtask(t, c.to, idx, nil)
			if err := nb.Restore(blobs); err != nil {
				t.Fatal(err)
			}
			got := dump(nb, register(nb))
			want := expected(keys, func(k int) bool {
				return keygroup.OperatorIndex(keyGroupOf(k), maxPar, c.to) == idx
			})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d→%d, subtask %d: restored %d values, want %d (exact contents differ)",
					c.from, c.to, idx, len(got.V), len(want.V))
			}
		}
	}
}

// expected is what populate writes for the keys where own is true.
func expected(keys []int, own func(int) bool) contents {
	c := contents{map[int]int{}, map[int][]int{}, map[int]map[int]int{}, map[int]float64{}}
	for _, k := range keys {
		if own(k) {
			c.V[k] = k * 10
			c.L[k] = []int{k, k + 1}
			c.M[k] = map[int]int{k: -k, 0: 0}
			c.A[k] = float64(k)
		}
	}
	return c
}

// TestRestoredStateSurvivesWithoutRegistration: a state restored but never
// registered is carried through later snapshots unchanged.
func TestRestoredStateSurvivesWithoutRegistration(t *testing.T) {
	keys := span(0, 200)
	blobs := oldSubtasks(t, 2, keys)
	mid := newSubtask(t, 1, 0, nil)
	if err := mid.Restore(blobs); err != nil {
		t.Fatal(err)
	}
	v := state.Value(mid, state.ValueDescriptor[int]{Name: "v"}) // only "v"
	at(mid, 0)
	v.Update(-7)
	r := restored(t, nil, snapshotBlob(t, mid, 0))
	want := expected(keys, func(int) bool { return true })
	want.V[0] = -7
	if got := dump(r, register(r)); !reflect.DeepEqual(got, want) {
		t.Fatal("unregistered states lost or changed")
	}
}

func TestRestoreErrors(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	h := register(b)
	populate(b, h, span(0, 20))
	blob := snapshotBlob(t, b, 0)

	other, _ := New(Options{MaxParallelism: 256, KeyGroupRange: keygroup.Range{Start: 0, End: 255}})
	if err := other.Restore([][]byte{blob}); !errors.Is(err, state.ErrIncompatible) {
		t.Errorf("max parallelism change: %v", err)
	}
	if err := newSubtask(t, 1, 0, nil).Restore([][]byte{blob, blob}); !errors.Is(err, state.ErrCorrupt) {
		t.Errorf("same blob twice: %v", err)
	}
	twice := newSubtask(t, 1, 0, nil)
	if err := twice.Restore(nil); err != nil {
		t.Fatal(err)
	}
	if err := twice.Restore(nil); !errors.Is(err, state.ErrRestoreAfterUse) {
		t.Errorf("second Restore: %v", err)
	}
	for n := 1; n < len(blob); n++ {
		if err := newSubtask(t, 1, 0, nil).Restore([][]byte{blob[:n]}); !errors.Is(err, state.ErrCorrupt) {
			t.Fatalf("blob truncated to %d of %d bytes: %v", n, len(blob), err)
		}
	}
	if err := newSubtask(t, 1, 0, nil).Restore([][]byte{append(blob, 0)}); !errors.Is(err, state.ErrCorrupt) {
		t.Errorf("trailing byte: %v", err)
	}
}

func TestRegistrationAfterRestoreChecks(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	populate(b, register(b), span(0, 5))
	blob := snapshotBlob(t, b, 0)
	cases := map[string]struct {
		f    func(*Backend)
		want error
	}{
		"kind changed":  {func(r *Backend) { state.List(r, state.ListDescriptor[int]{Name: "v"}) }, state.ErrIncompatible},
		"codec changed": {func(r *Backend) { state.Value(r, state.ValueDescriptor[string]{Name: "v"}) }, state.ErrCorrupt},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := restored(t, nil, blob)
			p := mustPanic(t, func() { c.f(r) })
			if err, ok := p.(error); !ok || !errors.Is(err, c.want) {
				t.Fatalf("panicked with %v, want %v", p, c.want)
			}
			// The failed registration leaves the restored state in place.
			if got := dump(r, register(r)); len(got.V) != 5 {
				t.Fatalf("restored values lost: %v", got.V)
			}
		})
	}
}

// FuzzRestore feeds arbitrary blobs to Restore and registers whatever it
// restored: no input may panic.
func FuzzRestore(f *testing.F) {
	b := newSubtask(f, 1, 0, nil)
	populate(b, register(b), span(0, 3))
	ttlState := state.Value(b, state.ValueDescriptor[string]{Name: "t", TTL: ttlOf(10, state.OnReadAndWrite)})
	at(b, 1)
	ttlState.Update("x")
	s, _ := b.Snapshot(0)
	blob, _ := s.Write()
	f.Add(blob)
	f.Add([]byte(blobMagic + "\x80\x01\x01\x01v\x01\x00\x01\x00\x01\x02\x02\x01"))
	f.Fuzz(func(t *testing.T, blob []byte) {
		r, _ := New(Options{KeyGroupRange: keygroup.Range{Start: 0, End: maxPar - 1}})
		if err := r.Restore([][]byte{blob}); err != nil {
			return
		}
		for name, raw := range r.pending {
			spec := state.StateSpec{Name: name, Kind: raw.kind, Codec: state.AnyCodec{}, UserKeyCodec: state.AnyCodec{}}
			switch raw.kind {
			case state.KindList:
				_, _ = r.ListTable(spec)
			case state.KindMap:
				_, _ = r.MapTable(spec)
			default:
				_, _ = r.ValueTable(spec)
			}
		}
		if s, err := r.Snapshot(0); err == nil {
			_, _ = s.Write()
		}
	})
}

// TestSnapshotAsStateGrowsAndShrinks writes snapshots of a state that
// grows from one key group to all 128 (the group count's uvarint from one
// byte to two, which Write places after encoding the groups) and shrinks
// back, so that each blob outgrows, then undershoots, the buffer sized
// from the one before; each must restore to exactly what was written.
func TestSnapshotAsStateGrowsAndShrinks(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	h := register(b)
	all := span(0, 2000)
	groups := map[int]bool{}
	for _, k := range all {
		groups[keyGroupOf(k)] = true
	}
	if len(groups) != maxPar {
		t.Fatalf("keys 0..1999 fall in %d key groups, the test needs all %d", len(groups), maxPar)
	}
	for _, keys := range [][]int{span(0, 1), all, span(0, 1), span(0, 3)} {
		for _, k := range all {
			at(b, k)
			h.v.Clear()
			h.l.Clear()
			h.m.Clear()
			h.a.Clear()
		}
		populate(b, h, keys)
		r := restored(t, nil, snapshotBlob(t, b, 0))
		want := expected(keys, func(int) bool { return true })
		if got := dump(r, register(r)); !reflect.DeepEqual(got, want) {
			t.Fatalf("%d keys: restored %d values, want %d (exact contents differ)", len(keys), len(got.V), len(want.V))
		}
	}
}
