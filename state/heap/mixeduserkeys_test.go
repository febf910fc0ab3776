package heap

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
)

// mixedUK maps a model user key to a string or an int64 (both halves of a
// ukSet and of a map's keyMap).
func mixedUK(u int64) any {
	if u%2 == 0 {
		return fmt.Sprint("u", u)
	}
	return u
}

type ukModel map[int]map[int64]int64

// lists of model m2 live under negative keys: -1-k.

func (m ukModel) clone() ukModel {
	c := ukModel{}
	for k, mm := range m {
		c[k] = maps.Clone(mm)
	}
	return c
}

type ukStates struct {
	b *Backend
	m state.MapState[any, int64]
	// lazily registered: a second map, registered after the first capture
	// of a restored backend.
	m2   state.MapState[any, []byte]
	l2   state.ListState[[]byte]
	lazy bool
}

func newUkStates(t *testing.T, r keygroup.Range, clock *fakeClock, files state.RestoreFiles, man []byte, lazy bool) *ukStates {
	t.Helper()
	b, err := New(Options{KeyGroupRange: r, Incremental: true, RestoreFiles: files, Clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	if man != nil {
		if err := b.Restore([][]byte{man}); err != nil {
			t.Fatal(err)
		}
	}
	s := &ukStates{b: b, m: state.Map(b, state.MapDescriptor[any, int64]{Name: "m", KeyCodec: state.AnyCodec{}, ValueCodec: state.Int64Codec{}}), lazy: lazy}
	if !lazy {
		s.reg2()
	}
	return s
}

func (s *ukStates) reg2() {
	s.m2 = state.Map(s.b, state.MapDescriptor[any, []byte]{Name: "m2", KeyCodec: state.AnyCodec{}, ValueCodec: state.BytesCodec{}})
	s.l2 = state.List(s.b, state.ListDescriptor[[]byte]{Name: "l2", Codec: state.BytesCodec{}})
	s.lazy = false
}

func (s *ukStates) step(rng *rand.Rand, m, m2 ukModel, keys int) {
	k := rng.IntN(keys)
	at(s.b, mixedKeyOf(k))
	if !s.lazy && rng.IntN(3) == 0 {
		lk := -1 - k
		if m2[lk] == nil {
			m2[lk] = map[int64]int64{}
		}
		l := m2[lk]
		switch rng.IntN(5) {
		case 0, 1:
			v := rng.Int64N(1000)
			s.l2.Add([]byte(fmt.Sprint(v)))
			l[int64(len(l))] = v
		case 2: // read, modify the elements in place, write back
			got := s.l2.Get()
			for j, b := range got {
				for i, c := range b {
					b[i] = '1' + (c-'0')%9
				}
				var v int64
				fmt.Sscan(string(b), &v)
				l[int64(j)] = v
			}
			if len(got) > 0 {
				s.l2.Update(got)
			}
		case 3:
			s.l2.Get()
		case 4:
			s.l2.Clear()
			delete(m2, lk)
		}
		if len(m2[lk]) == 0 {
			delete(m2, lk)
		}
		return
	}
	var which mapOps = int64Map{s.m}
	mm := m
	if !s.lazy && rng.IntN(2) == 0 {
		which, mm = bytesMap{s.m2}, m2
	}
	n := rng.Int64N(1000)
	uk := rng.Int64N(8)
	switch rng.IntN(8) {
	case 0, 1, 2, 3:
		which.Put(mixedUK(uk), n)
		if mm[k] == nil {
			mm[k] = map[int64]int64{}
		}
		mm[k][uk] = n
	case 4, 5:
		which.Remove(mixedUK(uk))
		delete(mm[k], uk)
		if len(mm[k]) == 0 {
			delete(mm, k)
		}
	case 6:
		if v, ok := which.Get(mixedUK(uk)); ok {
			mm[k][uk] = v
		}
	case 7:
		if rng.IntN(4) == 0 {
			which.Clear()
			delete(mm, k)
		}
	}
}

type mapOps interface {
	Put(any, int64)
	Remove(any)
	Get(any) (int64, bool)
	Clear()
	Range(func(any, int64) bool)
}

type int64Map struct{ m state.MapState[any, int64] }

func (m int64Map) Put(uk any, v int64)           { m.m.Put(uk, v) }
func (m int64Map) Remove(uk any)                 { m.m.Remove(uk) }
func (m int64Map) Get(uk any) (int64, bool)      { v, ok := m.m.Get(uk); return v, ok }
func (m int64Map) Clear()                        { m.m.Clear() }
func (m int64Map) Range(f func(any, int64) bool) { m.m.Range(f) }

type bytesMap struct{ m state.MapState[any, []byte] }

func (m bytesMap) Put(uk any, v int64) { m.m.Put(uk, []byte(fmt.Sprint(v))) }
func (m bytesMap) Remove(uk any)       { m.m.Remove(uk) }

// Get modifies the value read in place (its digits all become 1-9) and
// writes it back: a snapshot in flight must not see the change.
func (m bytesMap) Get(uk any) (int64, bool) {
	b, ok := m.m.Get(uk)
	if !ok {
		return 0, false
	}
	for i, c := range b {
		b[i] = '1' + (c-'0')%9
	}
	m.m.Put(uk, b) // written back, as the contract asks
	var v int64
	fmt.Sscan(string(b), &v)
	return v, true
}
func (m bytesMap) Clear() { m.m.Clear() }
func (m bytesMap) Range(f func(any, int64) bool) {
	m.m.Range(func(uk any, b []byte) bool {
		var v int64
		fmt.Sscan(string(b), &v)
		return f(uk, v)
	})
}

func ukCheck(t *testing.T, b *Backend, ms mapOps, m ukModel, keys int, what string) {
	t.Helper()
	for k := range keys {
		key := mixedKeyOf(k)
		at(b, key)
		got := map[int64]int64{}
		ms.Range(func(uk any, v int64) bool {
			switch x := uk.(type) {
			case int64:
				got[x] = v
			case string:
				var u int64
				fmt.Sscanf(x, "u%d", &u)
				got[u] = v
			default:
				t.Fatalf("%s: user key %v (%T)", what, uk, uk)
			}
			return true
		})
		if want := m[k]; len(got) != len(want) || len(want) > 0 && !maps.Equal(got, want) {
			t.Fatalf("%s: key %v (%T): map %v, want %v", what, key, key, got, want)
		}
	}
}

// TestIncrementalMixedUserKeysMatchModel: maps whose user keys are
// strings and int64s (both halves of the changed user-key sets), one of
// []byte values read, changed in place and written back, a list
// registered lazily after restores, several pending, failed and
// out-of-order snapshots, savepoints and restarts; every checkpoint
// written restores the model of its capture. Written by a review of the
// user-key sets (fifteenth session); it fails without 91efd34.
func TestIncrementalMixedUserKeysMatchModel(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { ukRun(t, seed) })
	}
}

func ukRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 91))
	const keys = 30
	whole := keygroup.RangeFor(maxPar, 1, 0)
	store := newMemStore("mem://r")
	clock := &fakeClock{ms: 1}
	s := newUkStates(t, whole, clock, nil, nil, false)
	model, model2 := ukModel{}, ukModel{}
	type held struct {
		snap  state.Snapshot
		m, m2 ukModel
	}
	type done struct {
		man   []byte
		m, m2 ukModel
	}
	var written []done
	var pending []held
	writeFiles := func(h held) {
		man, _, err := h.snap.(state.IncrementalSnapshot).WriteFiles(store)
		if err != nil {
			if !strings.Contains(err.Error(), "disk full") && !strings.Contains(err.Error(), "declined") {
				t.Error(err)
			}
			return
		}
		written = append(written, done{man, h.m, h.m2})
	}
	for round := range 60 {
		for range 3 + rng.IntN(40) {
			s.step(rng, model, model2, keys)
		}
		fate := rng.IntN(8)
		s.b.SnapshotFor(fate != 3)
		snap, err := s.b.Snapshot(clock.ms)
		if err != nil {
			t.Fatal(err)
		}
		if s.lazy && rng.IntN(2) == 0 {
			s.reg2()
		}
		h := held{snap, model.clone(), model2.clone()}
		switch fate {
		case 0, 1, 2:
			pending = append(pending, h)
		case 3:
			write(t, snap)
		case 4:
			store.fail = true
			writeFiles(h)
		default:
			writeFiles(h)
		}
		for len(pending) > 0 && rng.IntN(2) == 0 {
			j := rng.IntN(len(pending))
			writeFiles(pending[j])
			pending = slices.Delete(pending, j, j+1)
		}
		if t.Failed() {
			return
		}
		if (round == 20 || round == 40) && len(written) > 0 {
			last := written[len(written)-1]
			s = newUkStates(t, whole, clock, store, last.man, true)
			model, model2 = last.m.clone(), last.m2.clone()
		}
	}
	deltas := 0
	for name := range store.files {
		if strings.HasSuffix(name, ".delta") {
			deltas++
		}
	}
	t.Logf("%d files, %d deltas, %d checkpoints", len(store.files), deltas, len(written))
	for j, c := range written {
		r := newUkStates(t, whole, clock, store, c.man, false)
		ukCheck(t, r.b, int64Map{r.m}, c.m, keys, fmt.Sprintf("checkpoint %d of %d, m", j+1, len(written)))
		ukCheck(t, r.b, bytesMap{r.m2}, c.m2, keys, fmt.Sprintf("checkpoint %d of %d, m2", j+1, len(written)))
		for k := range keys {
			at(r.b, mixedKeyOf(k))
			var got []int64
			for _, b := range r.l2.Get() {
				var v int64
				fmt.Sscan(string(b), &v)
				got = append(got, v)
			}
			l := c.m2[-1-k]
			var want []int64
			for j := range int64(len(l)) {
				want = append(want, l[j])
			}
			if !slices.Equal(got, want) {
				t.Fatalf("checkpoint %d of %d: key %v: list %v, want %v", j+1, len(written), mixedKeyOf(k), got, want)
			}
		}
	}
}
