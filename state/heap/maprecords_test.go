package heap

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/state"
)

// cStore is a memStore whose puts (cFiles) run producers without holding
// its lock (so snapshots write concurrently), retry a producer (writing
// the content twice, as checkpointstorage does after a transient failure),
// or fail after the producer wrote part of its file. Restores read it as
// the memStore it is.
type cStore struct{ *memStore }

type failAfter struct{ n int }

func (w *failAfter) Write(p []byte) (int, error) {
	if w.n <= 0 {
		return 0, errors.New("upload broke")
	}
	w.n -= len(p)
	return len(p), nil
}

type cFiles struct {
	s     cStore
	fail  bool
	retry bool
}

func (f cFiles) Location() string { return f.s.loc }

func (f cFiles) Put(files []state.LocalFile) ([]state.FileHandle, error) {
	var hs []state.FileHandle
	for _, lf := range files {
		if f.fail {
			_ = lf.Write(&failAfter{n: 10})
			return nil, errors.New("disk full")
		}
		var buf bytes.Buffer
		if f.retry {
			_ = lf.Write(&failAfter{n: 10})
		}
		if err := lf.Write(&buf); err != nil {
			return nil, err
		}
		p := "shared/" + lf.Name
		f.s.mu.Lock()
		if old, dup := f.s.files[p]; dup && !bytes.Equal(old, buf.Bytes()) {
			f.s.mu.Unlock()
			return nil, fmt.Errorf("%s written twice, differently", p)
		}
		f.s.files[p] = buf.Bytes()
		f.s.mu.Unlock()
		hs = append(hs, state.FileHandle{Path: p, Size: int64(buf.Len())})
	}
	return hs, nil
}

type rvModel map[string]map[int]map[int]string // state -> key -> uk -> value

func (m rvModel) clone() rvModel {
	c := rvModel{}
	for n, ks := range m {
		c[n] = map[int]map[int]string{}
		for k, u := range ks {
			c[n][k] = maps.Clone(u)
		}
	}
	return c
}

func rvUK(u int) any {
	if u%3 == 0 {
		return int64(u)
	}
	return fmt.Sprint("u", u)
}

func rvUKBack(t *testing.T, uk any) int {
	switch x := uk.(type) {
	case int64:
		return int(x)
	case string:
		var u int
		fmt.Sscanf(x, "u%d", &u)
		return u
	}
	t.Fatalf("user key %v (%T)", uk, uk)
	return 0
}

type rvStates struct {
	b    *Backend
	maps map[string]state.MapState[any, []byte]
}

var rvNames = []string{"m", "t", "z"}

func rvDesc(name string) state.MapDescriptor[any, []byte] {
	d := state.MapDescriptor[any, []byte]{Name: name, KeyCodec: state.AnyCodec{}, ValueCodec: state.BytesCodec{}}
	if name == "t" {
		d.TTL = &state.TTLConfig{TTL: time.Hour, UpdateType: state.OnReadAndWrite}
	}
	return d
}

func newRvStates(t *testing.T, clock *fakeClock, files state.RestoreFiles, man []byte, lazy bool) *rvStates {
	t.Helper()
	b := incBackend(t, files, clock, man)
	s := &rvStates{b: b, maps: map[string]state.MapState[any, []byte]{}}
	for _, n := range rvNames {
		if !lazy || n == "m" {
			s.maps[n] = state.Map(b, rvDesc(n))
		}
	}
	return s
}

func (s *rvStates) step(t *testing.T, rng *rand.Rand, model rvModel, keys, uks int) {
	names := make([]string, 0, 3)
	for _, n := range rvNames {
		if s.maps[n] != nil {
			names = append(names, n)
		}
	}
	name := names[rng.IntN(len(names))]
	ms := s.maps[name]
	if model[name] == nil {
		model[name] = map[int]map[int]string{}
	}
	mm := model[name]
	k := rng.IntN(keys)
	at(s.b, mixedKeyOf(k))
	u := rng.IntN(uks)
	if rng.IntN(4) == 0 {
		u = rng.IntN(3) // hot user keys
	}
	uk := rvUK(u)
	switch rng.IntN(12) {
	case 0, 1, 2, 3:
		v := fmt.Sprint(rng.IntN(100000))
		ms.Put(uk, []byte(v))
		if mm[k] == nil {
			mm[k] = map[int]string{}
		}
		mm[k][u] = v
	case 4, 5:
		ms.Remove(uk)
		delete(mm[k], u)
		if len(mm[k]) == 0 {
			delete(mm, k)
		}
	case 6: // read, change in place, write back
		b, ok := ms.Get(uk)
		if ok != (mm[k] != nil && mm[k][u] != "") {
			panic(fmt.Sprintf("live state %s key %d uk %d: get %q %v, model %q", name, k, u, b, ok, mm[k][u]))
		}
		if !ok {
			return
		}
		if string(b) != mm[k][u] {
			panic(fmt.Sprintf("live state %s key %d uk %d: %q, model %q", name, k, u, b, mm[k][u]))
		}
		if rng.IntN(4) != 0 {
			for i := range b {
				b[i] = '0' + (b[i]-'0'+1)%10
			}
			mm[k][u] = string(b)
			ms.Put(uk, b)
		}
	case 7:
		ms.Contains(uk)
	case 8: // range, change every value in place and write it back
		type kv struct {
			uk any
			v  []byte
		}
		var all []kv
		ms.Range(func(uk any, v []byte) bool {
			all = append(all, kv{uk, v})
			return true
		})
		if rng.IntN(2) == 0 {
			for _, e := range all {
				for i := range e.v {
					e.v[i] = '0' + (e.v[i]-'0'+3)%10
				}
				ms.Put(e.uk, e.v)
				mm[k][rvUKBack(t, e.uk)] = string(e.v)
			}
		}
	case 9:
		if rng.IntN(3) == 0 {
			ms.Clear()
			delete(mm, k)
		}
	case 10: // burst: many user keys (past smallRecord)
		for range 5 + rng.IntN(20) {
			u := rng.IntN(uks)
			v := fmt.Sprint(rng.IntN(100000))
			if rng.IntN(4) == 0 {
				ms.Remove(rvUK(u))
				delete(mm[k], u)
				if len(mm[k]) == 0 {
					delete(mm, k)
				}
				continue
			}
			ms.Put(rvUK(u), []byte(v))
			if mm[k] == nil {
				mm[k] = map[int]string{}
			}
			mm[k][u] = v
		}
	case 11: // remove every user key, one at a time (the last removes the map)
		var all []any
		ms.Range(func(uk any, _ []byte) bool { all = append(all, uk); return true })
		for _, uk := range all {
			ms.Remove(uk)
		}
		delete(mm, k)
	}
}

func rvCheck(t *testing.T, s *rvStates, m rvModel, keys int, what string) {
	t.Helper()
	for _, name := range rvNames {
		ms := state.Map(s.b, rvDesc(name))
		for k := range keys {
			at(s.b, mixedKeyOf(k))
			got := map[int]string{}
			ms.Range(func(uk any, v []byte) bool {
				got[rvUKBack(t, uk)] = string(v)
				return true
			})
			want := m[name][k]
			if len(got) != len(want) || len(want) > 0 && !maps.Equal(got, want) {
				t.Fatalf("%s: state %s key %d: %v, want %v", what, name, k, got, want)
			}
		}
	}
}

// TestIncrementalMapRecordsMatchModel (a review's model test of the
// user-key change records, ukRecord): three map states (plain, with a TTL
// that reads refresh, registered lazily after restores), string and int64
// user keys enough for records past smallRecord, values changed in place
// and written back (Get, Range), Clear, and the last user key removed;
// snapshots written at once or late, concurrently with the task and with
// each other, failed mid-upload, retried, dropped unwritten, or taken as
// savepoints; two restores. Every written checkpoint restores to the model
// at its capture, and before each capture every record holds each user
// key once with the live map's value (rvCheckRecords).
func TestIncrementalMapRecordsMatchModel(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 4
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { rvRun(t, seed) })
	}
}

func rvRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	const keys, uks = 12, 30
	store := cStore{newMemStore("mem://r")}
	clock := &fakeClock{ms: 1}
	s := newRvStates(t, clock, nil, nil, false)
	model := rvModel{}
	type held struct {
		snap state.Snapshot
		m    rvModel
	}
	type done struct {
		man []byte
		m   rvModel
	}
	var mu sync.Mutex
	var written []done
	var pending []held
	var wg sync.WaitGroup
	writeFiles := func(h held, f cFiles) {
		man, _, err := h.snap.(state.IncrementalSnapshot).WriteFiles(f)
		if err != nil {
			if !strings.Contains(err.Error(), "disk full") && !strings.Contains(err.Error(), "declined") {
				t.Error(err)
			}
			return
		}
		mu.Lock()
		written = append(written, done{man, h.m})
		mu.Unlock()
	}
	for round := range 120 {
		for range 3 + rng.IntN(60) {
			s.step(t, rng, model, keys, uks)
		}
		rvCheckRecords(t, s.b)
		fate := rng.IntN(10)
		s.b.SnapshotFor(fate != 3)
		snap, err := s.b.Snapshot(clock.ms)
		if err != nil {
			t.Fatal(err)
		}
		if s.maps["z"] == nil && rng.IntN(2) == 0 {
			s.maps["z"] = state.Map(s.b, rvDesc("z"))
		}
		h := held{snap, model.clone()}
		switch fate {
		case 0, 1:
			pending = append(pending, h)
		case 2: // written on another goroutine while the task goes on
			wg.Add(1)
			f := cFiles{s: store, retry: rng.IntN(2) == 0}
			go func() { defer wg.Done(); writeFiles(h, f) }()
		case 3:
			wg.Add(1)
			go func() { defer wg.Done(); _, _ = h.snap.Write() }()
		case 4:
			writeFiles(h, cFiles{s: store, fail: true})
		case 5: // dropped unwritten
			if rng.IntN(2) == 0 {
				runtime.GC()
			}
		default:
			writeFiles(h, cFiles{s: store, retry: rng.IntN(3) == 0})
		}
		for len(pending) > 0 && rng.IntN(2) == 0 {
			j := rng.IntN(len(pending))
			p := pending[j]
			pending = append(pending[:j:j], pending[j+1:]...)
			if rng.IntN(2) == 0 {
				wg.Add(1)
				go func() { defer wg.Done(); writeFiles(p, cFiles{s: store}) }()
			} else {
				writeFiles(p, cFiles{s: store, fail: rng.IntN(5) == 0})
			}
		}
		if t.Failed() {
			wg.Wait()
			return
		}
		if round == 30 || round == 55 {
			wg.Wait()
		}
		if (round == 30 || round == 55) && len(written) > 0 {
			pending = nil
			mu.Lock()
			last := written[rng.IntN(len(written))]
			mu.Unlock()
			s = newRvStates(t, clock, store.memStore, last.man, true)
			model = last.m.clone()
		}
	}
	wg.Wait()
	t.Logf("%d files, %d checkpoints", len(store.files), len(written))
	for j, c := range written {
		r := newRvStates(t, clock, store.memStore, c.man, false)
		rvCheck(t, r, c.m, keys, fmt.Sprintf("checkpoint %d of %d", j+1, len(written)))
	}
}

// rvCheckRecords checks the invariant the alone path relies on: every
// record of the current interval holds each user key once, with the live
// map's value (the same object) or its absence.
func rvCheckRecords(t *testing.T, b *Backend) {
	t.Helper()
	rvCheckPositions(t, b)
	for name, tb := range b.tables {
		mt := tb.(*mapTable)
		for i, uks := range mt.data.uks {
			for k, r := range uks.all() {
				e, ok := mt.data.get(i, k)
				if !ok {
					t.Fatalf("%s: key %v has a record and no entry", name, k)
				}
				seen := map[any]bool{}
				for _, c := range r.changes {
					if seen[c.uk] {
						t.Fatalf("%s: key %v: user key %v recorded twice (%d changes)", name, k, c.uk.boxed(), len(r.changes))
					}
					seen[c.uk] = true
					el, has := e.m.getKey(c.uk)
					if has != c.ok || has && fmt.Sprintf("%p", el.v) != fmt.Sprintf("%p", c.v) {
						t.Fatalf("%s: key %v: user key %v recorded %v %q, live %v %q", name, k, c.uk.boxed(), c.ok, c.v, has, el.v)
					}
				}
				if r.index.len() > 0 && r.index.len() != len(r.changes) {
					t.Fatalf("%s: key %v: index %d, changes %d", name, k, r.index.len(), len(r.changes))
				}
			}
		}
	}
}
