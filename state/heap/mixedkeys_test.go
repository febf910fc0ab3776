package heap

import (
	"encoding/gob"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
)

type mixedKey string

func init() { gob.Register(mixedKey("")) }

// mixedKeyOf maps model key k to a backend key of one of many types, so
// that every part of keyMap (w, f, s and a) holds keys of several kinds.
func mixedKeyOf(k int) any {
	switch k % 9 {
	case 0: // a string of 4 or 8 bytes (words), 8 ending in 7 (reads as a 7-byte key's word) or 23 (a slot's two ends), 41
		if k/9%5 == 4 {
			return fmt.Sprintf("s%06d\x07", k)
		}
		return fmt.Sprintf("s%0*d", []int{3, 7, 22, 40}[k/9%5], k)
	case 1:
		return k
	case 2:
		return int64(k)
	case 3:
		return int32(k)
	case 4:
		return uint8(k)
	case 5:
		return float64(k) + 0.5
	case 6:
		return mixedKey(fmt.Sprint("r", k))
	case 7:
		return fmt.Sprint(k) // a string equal to no other kind's
	default:
		return uint64(k)
	}
}

type mkModel struct {
	l  map[int][]string
	tl map[int][]string // TTL'd list, TTL never reached
	m  map[int]map[int64]int64
	v  map[int]int64
}

func newMkModel() mkModel {
	return mkModel{map[int][]string{}, map[int][]string{}, map[int]map[int64]int64{}, map[int]int64{}}
}

func (m mkModel) clone() mkModel {
	c := newMkModel()
	for k, l := range m.l {
		c.l[k] = slices.Clone(l)
	}
	for k, l := range m.tl {
		c.tl[k] = slices.Clone(l)
	}
	for k, mm := range m.m {
		c.m[k] = maps.Clone(mm)
	}
	maps.Copy(c.v, m.v)
	return c
}

type mkStates struct {
	b  *Backend
	l  state.ListState[string]
	tl state.ListState[string]
	m  state.MapState[int64, int64]
	v  state.ValueState[int64]
}

func newMkStates(t *testing.T, r keygroup.Range, clock *fakeClock, files state.RestoreFiles, man []byte) mkStates {
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
	return mkStates{
		b:  b,
		l:  state.List(b, state.ListDescriptor[string]{Name: "l", Codec: state.StringCodec{}}),
		tl: state.List(b, state.ListDescriptor[string]{Name: "tl", Codec: state.StringCodec{}, TTL: &state.TTLConfig{TTL: time.Hour}}),
		m:  state.Map(b, state.MapDescriptor[int64, int64]{Name: "m", KeyCodec: state.Int64Codec{}, ValueCodec: state.Int64Codec{}}),
		v:  state.Value(b, state.ValueDescriptor[int64]{Name: "v", Codec: state.Int64Codec{}}),
	}
}

func (s mkStates) step(rng *rand.Rand, m mkModel, keys int) {
	k := rng.IntN(keys)
	at(s.b, mixedKeyOf(k))
	n := rng.Int64N(1000)
	ns := fmt.Sprint(n)
	switch rng.IntN(16) {
	case 0, 1, 2:
		s.l.Add(ns)
		m.l[k] = append(m.l[k], ns)
	case 3:
		s.l.AddAll([]string{ns, "y"})
		m.l[k] = append(m.l[k], ns, "y")
	case 4:
		s.l.Update([]string{"u", ns})
		m.l[k] = []string{"u", ns}
	case 5:
		s.l.Clear()
		delete(m.l, k)
	case 6:
		s.l.Clear()
		s.l.Add(ns)
		m.l[k] = []string{ns}
	case 7:
		s.l.Get() // may copy (private) elements a snapshot in flight shares
	case 8:
		s.tl.Add(ns)
		m.tl[k] = append(m.tl[k], ns)
	case 9:
		s.tl.Clear()
		delete(m.tl, k)
	case 10, 11:
		uk := rng.Int64N(5)
		s.m.Put(uk, n)
		if m.m[k] == nil {
			m.m[k] = map[int64]int64{}
		}
		m.m[k][uk] = n
	case 12:
		uk := rng.Int64N(5)
		s.m.Remove(uk)
		delete(m.m[k], uk)
		if len(m.m[k]) == 0 {
			delete(m.m, k)
		}
	case 13:
		s.m.Clear()
		delete(m.m, k)
	case 14:
		s.v.Update(n)
		m.v[k] = n
	case 15:
		s.v.Clear()
		delete(m.v, k)
	}
}

func (s mkStates) check(t *testing.T, m mkModel, keys int, r keygroup.Range, what string) {
	t.Helper()
	for k := range keys {
		key := mixedKeyOf(k)
		if !r.Contains(keyGroupOf(key)) {
			continue
		}
		at(s.b, key)
		if got, want := s.l.Get(), m.l[k]; !slices.Equal(got, want) {
			t.Fatalf("%s: key %v (%T): list %v, want %v", what, key, key, got, want)
		}
		if got, want := s.tl.Get(), m.tl[k]; !slices.Equal(got, want) {
			t.Fatalf("%s: key %v (%T): TTL list %v, want %v", what, key, key, got, want)
		}
		got := map[int64]int64{}
		s.m.Range(func(uk, v int64) bool { got[uk] = v; return true })
		if want := m.m[k]; len(got) != len(want) || len(want) > 0 && !maps.Equal(got, want) {
			t.Fatalf("%s: key %v (%T): map %v, want %v", what, key, key, got, want)
		}
		v, ok := s.v.Value()
		if want, has := m.v[k]; ok != has || v != want {
			t.Fatalf("%s: key %v (%T): value %v/%v, want %v/%v", what, key, key, v, ok, want, has)
		}
	}
}

// TestIncrementalMixedKeysMatchModel: as TestIncrementalMatchesModel, with
// keys of many types (both halves of keyMap: string keys unboxed, others
// boxed), lists with and without TTL, a map with int64 user keys and a
// value, snapshots held, dropped, failed and written out of order, and a
// restart half-way; every checkpoint written restores the model of its
// capture. Written by a review of the change records (fifteenth session).
func TestIncrementalMixedKeysMatchModel(t *testing.T) {
	const n = 8
	for seed := range uint64(n) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { mixedKeysRun(t, seed) })
	}
}

func mixedKeysRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 77))
	const keys = 90
	whole := keygroup.RangeFor(maxPar, 1, 0)
	store := newMemStore("mem://r")
	clock := &fakeClock{ms: 1}
	s := newMkStates(t, whole, clock, nil, nil)
	model := newMkModel()
	type held struct {
		snap  state.Snapshot
		model mkModel
	}
	type done struct {
		man   []byte
		model mkModel
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
		written = append(written, done{man, h.model})
	}
	for round := range 50 {
		for range 5 + rng.IntN(60) {
			s.step(rng, model, keys)
		}
		fate := rng.IntN(8)
		s.b.SnapshotFor(fate != 3)
		snap, err := s.b.Snapshot(clock.ms)
		if err != nil {
			t.Fatal(err)
		}
		h := held{snap, model.clone()}
		switch fate {
		case 0, 1:
			pending = append(pending, h)
		case 2: // dropped
		case 3:
			write(t, snap)
		case 4:
			store.fail = true
			writeFiles(h)
		default:
			writeFiles(h)
		}
		if len(pending) > 0 && rng.IntN(3) == 0 {
			j := rng.IntN(len(pending))
			writeFiles(pending[j])
			pending = slices.Delete(pending, j, j+1)
		}
		if t.Failed() {
			return
		}
		if round == 25 && len(written) > 0 {
			last := written[len(written)-1]
			s = newMkStates(t, whole, clock, store, last.man)
			model = last.model.clone()
			s.check(t, model, keys, whole, "after the restart")
		}
	}
	for j, c := range written {
		r := newMkStates(t, whole, clock, store, c.man)
		r.check(t, c.model, keys, whole, fmt.Sprintf("checkpoint %d of %d", j+1, len(written)))
	}
}
