package heap

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
)

// memStore is checkpoint storage in memory for these tests (state may not
// import checkpointstorage; the runtime's tests run the backend against
// the real one): shared files by name, each written once.
type memStore struct {
	loc   string
	mu    sync.Mutex
	files map[string][]byte
	// fail makes the next Put fail, as a full disk would.
	fail bool
	puts []string
}

func newMemStore(loc string) *memStore { return &memStore{loc: loc, files: map[string][]byte{}} }

func (s *memStore) Location() string { return s.loc }

func (s *memStore) Put(files []state.LocalFile) ([]state.FileHandle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		s.fail = false
		return nil, errors.New("disk full")
	}
	var hs []state.FileHandle
	for _, f := range files {
		if !f.Shared {
			return nil, fmt.Errorf("%s: the heap backend's files are shared", f.Name)
		}
		var buf bytes.Buffer
		if err := f.Write(&buf); err != nil {
			return nil, err
		}
		data := buf.Bytes()
		p := "shared/" + f.Name
		if _, dup := s.files[p]; dup {
			return nil, fmt.Errorf("%s written twice", p)
		}
		s.files[p] = data
		s.puts = append(s.puts, p)
		hs = append(hs, state.FileHandle{Path: p, Size: int64(len(data))})
	}
	return hs, nil
}

func (s *memStore) Fetch(h state.FileHandle, dst string, _ bool) error {
	s.mu.Lock()
	data, ok := s.files[h.Path]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("%s is missing", h.Path)
	}
	return os.WriteFile(dst, data, 0o644)
}

// incModel is what the states of incBackend hold, as plain maps.
type incModel struct {
	late map[int]int64    // a value state registered after the first snapshots
	t    map[int][2]int64 // the TTL'd value: value, time written
	v    map[int]int64
	l    map[int][]string
	m    map[int]map[string]int64
}

func newIncModel() incModel {
	return incModel{late: map[int]int64{}, t: map[int][2]int64{}, v: map[int]int64{}, l: map[int][]string{}, m: map[int]map[string]int64{}}
}

func (m incModel) clone() incModel {
	c := newIncModel()
	maps.Copy(c.v, m.v)
	maps.Copy(c.t, m.t)
	maps.Copy(c.late, m.late)
	for k, l := range m.l {
		c.l[k] = slices.Clone(l)
	}
	for k, mm := range m.m {
		c.m[k] = maps.Clone(mm)
	}
	return c
}

// incStates are a value, a list and a map state of one backend.
type incStates struct {
	b     *Backend
	clock *fakeClock
	t     state.ValueState[int64]
	late  state.ValueState[int64] // nil until registered
	v     state.ValueState[int64]
	l     state.ListState[string]
	// p holds what l holds, in a placedTable (placedCodec).
	p state.ListState[string]
	// pv holds v's values as strings, in a placedValueTable (placedCodec).
	pv state.ValueState[string]
	m  state.MapState[string, int64]
}

// incTTL is the TTL'd value's time-to-live, in ms of the fake clock.
const incTTL = 40

func newIncStates(t *testing.T, r keygroup.Range, clock *fakeClock, files state.RestoreFiles, blobs [][]byte) incStates {
	t.Helper()
	b, err := New(Options{KeyGroupRange: r, Incremental: true, RestoreFiles: files, Clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	if blobs != nil {
		if err := b.Restore(blobs); err != nil {
			t.Fatal(err)
		}
	}
	s := incStates{
		b:     b,
		clock: clock,
		t: state.Value(b, state.ValueDescriptor[int64]{Name: "t", Codec: state.Int64Codec{},
			TTL: &state.TTLConfig{TTL: incTTL * time.Millisecond}}),
		v:  state.Value(b, state.ValueDescriptor[int64]{Name: "v", Codec: state.Int64Codec{}}),
		l:  state.List(b, state.ListDescriptor[string]{Name: "l", Codec: state.StringCodec{}}),
		p:  state.List(b, state.ListDescriptor[string]{Name: "p", Codec: placedCodec{}}),
		pv: state.Value(b, state.ValueDescriptor[string]{Name: "pv", Codec: placedCodec{}}),
		m:  state.Map(b, state.MapDescriptor[string, int64]{Name: "m", KeyCodec: state.StringCodec{}, ValueCodec: state.Int64Codec{}}),
	}
	if blobs != nil {
		s.registerLate()
	}
	return s
}

func (s *incStates) registerLate() {
	s.late = state.Value(s.b, state.ValueDescriptor[int64]{Name: "late", Codec: state.Int64Codec{}})
}

// incKey is the backend's key for the model's key k: a string of about
// the most a word holds (keyMap.w), a string of about the most a map's
// slot holds (keyMap.f), or k itself, so that key groups hold keys of
// every kind (keyMap).
func incKey(k int) any {
	switch k % 4 {
	case 1: // 6 to 8 bytes, words (8 ending in 3 too); 8 that read as a 3-byte key's word, in a slot
		switch k % 5 {
		case 0:
			return string([]byte{'k', byte(k >> 8), byte(k), 0, 0, 0, 0, 3})
		case 1:
			return fmt.Sprintf("k%06d\x03", k)
		}
		return fmt.Sprintf("k%0*d", wordKeyMax-2+k%3, k)
	case 3: // 22 to 24 bytes: either side of what a slot holds
		return fmt.Sprintf("%0*d", shortKeyMax-1+k%3, k)
	}
	return k
}

// compactions adds the compactions of the placed list and value to list
// and value.
func (s incStates) compactions(list, value int) (int, int) {
	return list + s.b.tables["p"].(*placedTable).compactions, value + s.b.tables["pv"].(*placedValueTable).compactions
}

// step applies one random operation to the states and the model.
func (s incStates) step(rng *rand.Rand, model incModel, keys int) {
	k := rng.IntN(keys)
	at(s.b, incKey(k))
	n := rng.Int64N(1000)
	uk := fmt.Sprint("u", rng.IntN(4), strings.Repeat("x", rng.IntN(2)*9)) // a word or a short key (ukMap.w, km.f)
	s.clock.ms++
	if s.late != nil && rng.IntN(8) == 0 {
		s.late.Update(n)
		model.late[k] = n
		return
	}
	switch rng.IntN(11) {
	case 10:
		s.t.Update(n)
		model.t[k] = [2]int64{n, s.clock.ms}
	case 0, 1:
		s.v.Update(n)
		s.pv.Update(fmt.Sprint(n))
		model.v[k] = n
	case 2:
		s.v.Clear()
		s.pv.Clear()
		delete(model.v, k)
	case 3, 4:
		s.l.Add(fmt.Sprint(n))
		s.p.Add(fmt.Sprint(n))
		model.l[k] = append(model.l[k], fmt.Sprint(n))
	case 5:
		s.l.Update([]string{"x", fmt.Sprint(n)})
		s.p.Update([]string{"x", fmt.Sprint(n)})
		model.l[k] = []string{"x", fmt.Sprint(n)}
	case 6:
		s.l.Clear()
		s.p.Clear()
		delete(model.l, k)
	case 7, 8:
		s.m.Put(uk, n)
		if model.m[k] == nil {
			model.m[k] = map[string]int64{}
		}
		model.m[k][uk] = n
	case 9:
		s.m.Remove(uk)
		delete(model.m[k], uk)
		if len(model.m[k]) == 0 {
			delete(model.m, k)
		}
	}
}

// check compares the states, for keys in range r, with the model.
func (s incStates) check(t *testing.T, model incModel, keys int, r keygroup.Range, what string) {
	t.Helper()
	for k := range keys {
		if !r.Contains(keyGroupOf(incKey(k))) {
			continue
		}
		at(s.b, incKey(k))
		if s.late != nil {
			if lv, ok := s.late.Value(); model.late[k] != lv || ok != hasKey(model.late, k) {
				t.Fatalf("%s: key %d: late value %v/%v, want %v", what, k, lv, ok, model.late[k])
			}
		}
		tv, ok := s.t.Value()
		w, has := model.t[k]
		if has = has && s.clock.ms-w[1] < incTTL; ok != has || tv != w[0] && has {
			t.Fatalf("%s: key %d: TTL'd value %v/%v at %d ms, want %v/%v", what, k, tv, ok, s.clock.ms, w, has)
		}
		v, ok := s.v.Value()
		if want, has := model.v[k]; ok != has || v != want {
			t.Fatalf("%s: key %d: value %v/%v, want %v/%v", what, k, v, ok, want, has)
		}
		pv, ok := s.pv.Value()
		if want, has := model.v[k]; ok != has || has && pv != fmt.Sprint(want) {
			t.Fatalf("%s: key %d: placed value %q/%v, want %v/%v", what, k, pv, ok, want, has)
		}
		if l, want := s.l.Get(), model.l[k]; !slices.Equal(l, want) {
			t.Fatalf("%s: key %d: list %v, want %v", what, k, l, want)
		}
		if l, want := s.p.Get(), model.l[k]; !slices.Equal(l, want) {
			t.Fatalf("%s: key %d: placed list %v, want %v", what, k, l, want)
		}
		got := map[string]int64{}
		s.m.Range(func(uk string, v int64) bool {
			got[uk] = v
			return true
		})
		if want := model.m[k]; len(got) != len(want) || (len(want) > 0 && !maps.Equal(got, want)) {
			t.Fatalf("%s: key %d: map %v, want %v", what, k, got, want)
		}
	}
}

// TestIncrementalMatchesModel runs random writes against a model,
// checkpointing as a runtime would — some snapshots written at once, some
// later and out of order, some dropped, some failing to upload, some
// written full as savepoints — and restores every checkpoint written, at
// the same and at another parallelism, comparing with the model as it was
// at the snapshot. It also requires the chains to hold deltas, and a new
// base once the deltas outgrow the last.
func TestIncrementalMatchesModel(t *testing.T) {
	// Placed lists and values compact often, with snapshots in flight,
	// and record their logs of changes between captures too.
	setVar(t, &placedMinWaste, 64)
	setVar(t, &maxLogged, 8)
	for seed := range uint64(24) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { incrementalRun(t, seed) })
	}
}

type writtenCheckpoint struct {
	manifest []byte
	model    incModel
	at       int64 // the clock at the snapshot
}

type heldSnapshot struct {
	snap  state.Snapshot
	model incModel
	at    int64
}

func incrementalRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 16))
	const keys = 300
	whole := keygroup.RangeFor(maxPar, 1, 0)
	store := newMemStore("mem://a")
	clock := &fakeClock{}
	s := newIncStates(t, whole, clock, nil, nil)
	model := newIncModel()
	var done []writtenCheckpoint
	var held []heldSnapshot
	deltaCaptures := 0
	var listCompactions, valueCompactions int
	var mu sync.Mutex // guards done: two snapshots may be written at once
	writeFiles := func(h heldSnapshot) {
		man, needs, err := h.snap.(state.IncrementalSnapshot).WriteFiles(store)
		if err != nil {
			// A failed upload, or a snapshot older than every chain the
			// backend remembers (refused, see chain.plan): the checkpoint
			// is declined.
			if !strings.Contains(err.Error(), "disk full") && !strings.Contains(err.Error(), "newer ones; its checkpoint is declined") &&
				!strings.Contains(err.Error(), "not there any more") {
				t.Error(err)
			}
			return
		}
		if len(needs) == 0 {
			t.Error("an incremental snapshot names no files")
		}
		mu.Lock()
		done = append(done, writtenCheckpoint{man, h.model, h.at})
		mu.Unlock()
	}
	for round := range 60 {
		for range 20 + rng.IntN(200) {
			s.step(rng, model, keys)
		}
		fate := rng.IntN(8)
		s.b.SnapshotFor(fate != 3) // a savepoint (3) is written in full
		snap, err := s.b.Snapshot(clock.ms)
		if err != nil {
			t.Fatal(err)
		}
		if snap.(*incrementalSnapshot).delta {
			deltaCaptures++
		}
		h := heldSnapshot{snap, model.clone(), clock.ms}
		switch fate {
		case 0: // held, written after later ones
			held = append(held, h)
		case 1: // dropped: its checkpoint failed before the write
		case 2: // the upload fails
			store.fail = true
			writeFiles(h)
		case 3: // a savepoint: full and canonical
			if blob := write(t, snap); !strings.HasPrefix(string(blob), blobMagic) {
				t.Fatalf("savepoint blob starts %q", blob[:4])
			}
		default:
			writeFiles(h)
		}
		switch {
		case len(held) > 1 && rng.IntN(3) == 0: // two written at once, as concurrent checkpoints are
			var wg sync.WaitGroup
			for _, h := range held[:2] {
				wg.Go(func() { writeFiles(h) })
			}
			wg.Wait()
			held = held[2:]
		case len(held) > 0 && rng.IntN(3) == 0:
			writeFiles(held[0])
			held = held[1:]
		}
		if t.Failed() {
			return
		}
		if round == 5 { // an operator registers a state after the first snapshots
			s.registerLate()
		}
		if round == 30 { // the job restarts from its latest checkpoint
			listCompactions, valueCompactions = s.compactions(listCompactions, valueCompactions)
			last := done[len(done)-1]
			s = newIncStates(t, whole, clock, store, [][]byte{last.manifest})
			model = last.model.clone()
			s.check(t, model, keys, whole, "after the restart")
		}
	}
	if l, v := s.compactions(listCompactions, valueCompactions); l == 0 || v == 0 {
		t.Fatalf("%d compactions of the placed list and %d of the placed value: the test does not reach them", l, v)
	}
	for j, c := range done {
		clock.ms = c.at // restored at once: the TTL'd values written in the last incTTL ms live
		r := newIncStates(t, whole, clock, store, [][]byte{c.manifest})
		r.check(t, c.model, keys, whole, fmt.Sprintf("checkpoint %d of %d", j+1, len(done)))
		for i := range 3 { // rescaled to 3 subtasks
			rr := keygroup.RangeFor(maxPar, 3, i)
			newIncStates(t, rr, clock, store, [][]byte{c.manifest}).check(t, c.model, keys, rr, fmt.Sprintf("checkpoint %d, subtask %d of 3", j+1, i))
		}
	}
	var bases, deltas int
	for _, p := range store.puts {
		switch {
		case strings.HasSuffix(p, ".base"):
			bases++
		case strings.HasSuffix(p, ".delta"):
			deltas++
		}
	}
	if bases < 3 || deltas < 10 {
		t.Fatalf("%d bases and %d deltas written, want at least 3 and 10 (one base per restart and when deltas outgrow it)", bases, deltas)
	}
	if deltaCaptures < 10 {
		t.Fatalf("%d snapshots captured only changed keys, want at least 10", deltaCaptures)
	}
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

// incBackend returns an incremental backend of one subtask, restored from
// manifest when it is not nil.
func incBackend(t *testing.T, files state.RestoreFiles, clock *fakeClock, manifest []byte) *Backend {
	t.Helper()
	b, err := New(Options{KeyGroupRange: keygroup.RangeFor(maxPar, 1, 0), Incremental: true, RestoreFiles: files, Clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	if manifest != nil {
		if err := b.Restore([][]byte{manifest}); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// checkpointTo takes a snapshot of b and writes it into store.
func checkpointTo(t *testing.T, b *Backend, store *memStore) ([]byte, []state.FileHandle) {
	t.Helper()
	s, err := b.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	return writeTo(t, s, store)
}

func writeTo(t *testing.T, s state.Snapshot, store *memStore) ([]byte, []state.FileHandle) {
	t.Helper()
	man, needs, err := s.(state.IncrementalSnapshot).WriteFiles(store)
	if err != nil {
		t.Fatal(err)
	}
	return man, needs
}

var incMap = state.MapDescriptor[string, int64]{Name: "m", KeyCodec: state.StringCodec{}, ValueCodec: state.Int64Codec{}}

// TestIncrementalMapWriteAfterLazyRegistration: a map state restored and
// registered only after the first snapshot since holds entries stored at
// the backend's version, which Put changes in place; the next delta must
// still hold the change (a review found it lost).
func TestIncrementalMapWriteAfterLazyRegistration(t *testing.T) {
	clock, store := &fakeClock{}, newMemStore("mem://a")
	b := incBackend(t, nil, clock, nil)
	at(b, 1)
	state.Map(b, incMap).Put("a", 1)
	man, _ := checkpointTo(t, b, store)

	b2 := incBackend(t, store, clock, man)
	checkpointTo(t, b2, store) // a base; "m" is not registered yet
	m2 := state.Map(b2, incMap)
	at(b2, 1)
	m2.Put("a", 2)
	m2.Put("b", 3)
	man2, _ := checkpointTo(t, b2, store) // a delta

	b3 := incBackend(t, store, clock, man2)
	m3 := state.Map(b3, incMap)
	at(b3, 1)
	a, _ := m3.Get("a")
	bb, _ := m3.Get("b")
	if a != 2 || bb != 3 {
		t.Fatalf("restored m = {a: %d, b: %d}, want {a: 2, b: 3}", a, bb)
	}
}

// TestIncrementalWriteAfterLazyRegistration: a list and a value state
// restored and registered only after the first snapshot since; a write
// that finds a value stored at the current version takes the key's change
// as recorded already (listTable.Add, valueTable.Put), so values a
// restore loads must count as older, or the next delta loses the write
// (the list's append was lost until the fifteenth session).
func TestIncrementalWriteAfterLazyRegistration(t *testing.T) {
	ld := state.ListDescriptor[string]{Name: "l", Codec: state.StringCodec{}}
	vd := state.ValueDescriptor[int64]{Name: "v", Codec: state.Int64Codec{}}
	clock, store := &fakeClock{}, newMemStore("mem://a")
	b := incBackend(t, nil, clock, nil)
	at(b, 1)
	state.List(b, ld).Add("x")
	state.Value(b, vd).Update(1)
	man, _ := checkpointTo(t, b, store)

	b2 := incBackend(t, store, clock, man)
	checkpointTo(t, b2, store) // a base; neither state is registered yet
	l2, v2 := state.List(b2, ld), state.Value(b2, vd)
	at(b2, 1)
	l2.Add("y")
	v2.Update(2)
	man2, _ := checkpointTo(t, b2, store) // a delta

	b3 := incBackend(t, store, clock, man2)
	at(b3, 1)
	gotL := state.List(b3, ld).Get()
	gotV, _ := state.Value(b3, vd).Value()
	if fmt.Sprint(gotL, gotV) != "[x y] 2" {
		t.Fatalf("restored l = %v, v = %d, want [x y] and 2", gotL, gotV)
	}
}

// frozenRows is a list element codec whose values are immutable
// (state.ImmutableType), as SQL's state rows are; copies counts Copy calls.
type frozenRows struct {
	state.BytesCodec
	copies *int
}

func (f frozenRows) Copy(b []byte) []byte { *f.copies++; return b }

func (frozenRows) IsImmutableType() bool { return true }

// TestImmutableListReadKeepsAppendRecord: a list of immutable values read
// while a snapshot is in flight is handed out as it is: no copy stored
// back, so the key's record stays an append and the next delta holds the
// element appended, not the whole list. Before state.ImmutableType, every
// read of a SQL join's list during a checkpoint's upload cloned it and
// made the key whole.
func TestImmutableListReadKeepsAppendRecord(t *testing.T) {
	copies := 0
	ld := state.ListDescriptor[[]byte]{Name: "l", Codec: frozenRows{copies: &copies}}
	b := incBackend(t, nil, &fakeClock{}, nil)
	l := state.List(b, ld)
	at(b, "k")
	l.Add([]byte("x"))
	l.Add([]byte("y"))
	b.SnapshotFor(true)
	if _, err := b.Snapshot(0); err != nil { // in flight: never written
		t.Fatal(err)
	}
	if got := l.Get(); fmt.Sprintf("%s", got) != "[x y]" {
		t.Fatalf("list %s, want [x y]", got)
	}
	l.Add([]byte("z"))
	tbl := b.tables["l"].(*listTable)
	how, ok := tbl.data.dirty[keyGroupOf("k")-b.opts.KeyGroupRange.Start].getString("k")
	if copies != 0 || !ok || how != 2 {
		t.Fatalf("after a read in flight and an append: %d copies, record %d (%v), want 0 copies and an append from 2", copies, how, ok)
	}
}

// TestIncrementalTTLChangeAfterCapture: a snapshot captured before a
// restored state is registered with another TTL setting (its bytes are
// written back in the old format) is written after the registration; the
// checkpoints after it must still restore (a review found the next delta
// extending that snapshot's base with entries in the new format).
func TestIncrementalTTLChangeAfterCapture(t *testing.T) {
	clock, store := &fakeClock{ms: 1000}, newMemStore("mem://a")
	vd := state.ValueDescriptor[int64]{Name: "v", Codec: state.Int64Codec{}}
	b := incBackend(t, nil, clock, nil)
	at(b, 1)
	state.Value(b, vd).Update(1)
	man, _ := checkpointTo(t, b, store)

	b2 := incBackend(t, store, clock, man)
	s1, err := b2.Snapshot(0) // "v" is pending: its bytes have no TTL timestamps
	if err != nil {
		t.Fatal(err)
	}
	vd.TTL = &state.TTLConfig{TTL: time.Hour}
	v2 := state.Value(b2, vd)
	man1, _ := writeTo(t, s1, store)
	at(b2, 1)
	v2.Update(2)
	man2, _ := checkpointTo(t, b2, store)
	for i, m := range [][]byte{man1, man2} {
		b3 := incBackend(t, store, clock, m)
		at(b3, 1)
		got, _ := state.Value(b3, vd).Value()
		if want := int64(i + 1); got != want {
			t.Fatalf("checkpoint %d restored v = %d, want %d", i+1, got, want)
		}
	}
}

// TestIncrementalRetentionKeepsNewerChains: snapshots written out of
// capture order, then retention as checkpoint storage does it with one
// checkpoint retained — each checkpoint completing, in capture order,
// deletes the shared files only the one before named — must leave every
// file the newest checkpoint names (a review found a late, older snapshot
// starting a base that made the files of the newer one's chain go).
func TestIncrementalRetentionKeepsNewerChains(t *testing.T) {
	for _, newerFirst := range []bool{false, true} {
		clock, store := &fakeClock{}, newMemStore("mem://a")
		b := incBackend(t, nil, clock, nil)
		v := state.Value(b, state.ValueDescriptor[int64]{Name: "v", Codec: state.Int64Codec{}})
		at(b, 1)
		v.Update(1)
		_, needs1 := checkpointTo(t, b, store)
		v.Update(2)
		_, needs2 := checkpointTo(t, b, store)
		v.Update(3)
		s3, _ := b.Snapshot(0)
		v.Update(4)
		s4, _ := b.Snapshot(0)
		var man4 []byte
		var needs3, needs4 []state.FileHandle
		if newerFirst {
			man4, needs4 = writeTo(t, s4, store)
			_, needs3 = writeTo(t, s3, store)
		} else {
			_, needs3 = writeTo(t, s3, store)
			man4, needs4 = writeTo(t, s4, store)
		}
		for _, step := range [][2][]state.FileHandle{{needs1, needs2}, {needs2, needs3}, {needs3, needs4}} {
			retire(store, step[0], step[1])
		}
		b5 := incBackend(t, store, clock, man4)
		at(b5, 1)
		if got, _ := state.Value(b5, state.ValueDescriptor[int64]{Name: "v", Codec: state.Int64Codec{}}).Value(); got != 4 {
			t.Fatalf("newer first %v: restored v = %d, want 4", newerFirst, got)
		}
	}
}

// retire deletes the files old names and kept does not, as retention does
// when the checkpoint naming kept completes.
func retire(store *memStore, old, kept []state.FileHandle) {
	store.mu.Lock()
	defer store.mu.Unlock()
	for _, h := range old {
		if !slices.ContainsFunc(kept, func(k state.FileHandle) bool { return k.Path == h.Path }) {
			delete(store.files, h.Path)
		}
	}
}

// TestIncrementalLateBaseAfterPrunedChanges: a snapshot written after a
// newer one (which drops the recorded changes up to its own capture) writes
// a base below it; the snapshot between them must not extend that base with
// a delta missing its changes (found with 120 seeds of the model test).
func TestIncrementalLateBaseAfterPrunedChanges(t *testing.T) {
	clock, store := &fakeClock{}, newMemStore("mem://a")
	b := incBackend(t, nil, clock, nil)
	desc := state.ListDescriptor[string]{Name: "l", Codec: state.StringCodec{}}
	l := state.List(b, desc)
	snap := func() state.Snapshot {
		b.SnapshotFor(true)
		s, err := b.Snapshot(0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	at(b, 1)
	l.Add("x")
	s1 := snap()
	at(b, 2)
	l.Add("y")
	s2, s3 := snap(), snap()
	writeTo(t, s3, store)
	writeTo(t, s1, store)
	man2, _ := writeTo(t, s2, store)
	r := incBackend(t, store, clock, man2)
	for k, want := range map[int][]string{1: {"x"}, 2: {"y"}} {
		at(r, k)
		if got := state.List(r, desc).Get(); !slices.Equal(got, want) {
			t.Errorf("restored checkpoint of the second snapshot: key %d list %v, want %v", k, got, want)
		}
	}
}

// TestIncrementalBaseWhenChainHoldsDead: which checkpoints write a new
// base. A state that only gains keys and appends keeps extending its
// chain past twice its base, since every delta byte is still live; one
// that overwrites its keys, or appends and then clears them (a window),
// gets a new base once its chain passes twice the live state.
func TestIncrementalBaseWhenChainHoldsDead(t *testing.T) {
	row := strings.Repeat("x", 100)
	cases := []struct {
		name string
		step func(b *Backend, l state.ListState[string], v state.ValueState[string], round int)
		// bases is how many of the 12 checkpoints write a base.
		bases func(n int) bool
	}{
		{"appends to new and old keys", func(b *Backend, l state.ListState[string], _ state.ValueState[string], round int) {
			for k := range 50 {
				at(b, fmt.Sprint("k", round*50+k))
				l.Add(row)
				at(b, fmt.Sprint("k", k))
				l.Add(row)
			}
		}, func(n int) bool { return n == 1 }},
		{"overwrites", func(b *Backend, _ state.ListState[string], v state.ValueState[string], round int) {
			for k := range 50 {
				at(b, fmt.Sprint("k", k))
				v.Update(fmt.Sprint(row, round))
			}
		}, func(n int) bool { return n >= 4 }},
		{"appends then clears", func(b *Backend, l state.ListState[string], _ state.ValueState[string], round int) {
			for k := range 50 {
				at(b, fmt.Sprint("w", round, "-", k))
				l.Add(row)
				if round > 0 {
					at(b, fmt.Sprint("w", round-1, "-", k))
					l.Clear()
				}
			}
		}, func(n int) bool { return n >= 4 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clock, store := &fakeClock{}, newMemStore("mem://a")
			b := incBackend(t, nil, clock, nil)
			l := state.List(b, state.ListDescriptor[string]{Name: "l", Codec: state.StringCodec{}})
			v := state.Value(b, state.ValueDescriptor[string]{Name: "v", Codec: state.StringCodec{}})
			var man []byte
			for round := range 12 {
				c.step(b, l, v, round)
				b.SnapshotFor(true)
				man, _ = checkpointTo(t, b, store)
			}
			bases := 0
			for _, p := range store.puts {
				if strings.HasSuffix(p, ".base") {
					bases++
				}
			}
			if !c.bases(bases) {
				t.Fatalf("%d of 12 checkpoints wrote a base (files %v)", bases, store.puts)
			}
			// The last chain restores to the state as written.
			r := incBackend(t, store, clock, man)
			rl := state.List(r, state.ListDescriptor[string]{Name: "l", Codec: state.StringCodec{}})
			rv := state.Value(r, state.ValueDescriptor[string]{Name: "v", Codec: state.StringCodec{}})
			for _, k := range b.tables["l"].keys(0) {
				at(b, k)
				at(r, k)
				if got, want := rl.Get(), l.Get(); !slices.Equal(got, want) {
					t.Fatalf("restored list of %v: %d rows, want %d", k, len(got), len(want))
				}
			}
			for _, k := range b.tables["v"].keys(0) {
				at(b, k)
				at(r, k)
				if got, want := fmt.Sprint(rv.Value()), fmt.Sprint(v.Value()); got != want {
					t.Fatalf("restored value of %v: %s, want %s", k, got, want)
				}
			}
			for _, name := range []string{"l", "v"} {
				if got, want := len(r.tables[name].keys(0)), len(b.tables[name].keys(0)); got != want {
					t.Fatalf("state %s restored with %d keys, want %d", name, got, want)
				}
			}
		})
	}
}

// TestIncrementalExpiredIsNotLive: entries expired but not yet cleaned up
// stay in memory, and snapshots leave them out; the estimate of the live
// state that decides new bases must leave them out too, or a chain of
// deltas whose rows all expired would run on to maxDeltas files, each
// restore reading many times the state (a review found 31× with 30).
// Each round's delta here is about the live state's size, so a chain that
// keeps to the rule (a base once the deltas outgrow the base and the files
// twice the state) ends at most at a base and two deltas: 3.1×, since the
// deltas hold the cleanup's deletes too. Which of 1, 2 or 3 files the last
// chain has depends on the random sample that estimates the live state,
// so the bound is 4×.
func TestIncrementalExpiredIsNotLive(t *testing.T) {
	row := strings.Repeat("x", 100)
	clock, store := &fakeClock{ms: 1}, newMemStore("mem://a")
	b := incBackend(t, nil, clock, nil)
	l := state.List(b, state.ListDescriptor[string]{Name: "l", Codec: state.StringCodec{},
		TTL: &state.TTLConfig{TTL: 10 * time.Millisecond}})
	var needs []state.FileHandle
	for round := range 30 {
		clock.ms += 10 // the rows of every round before have expired
		for k := range 50 {
			at(b, fmt.Sprint("w", round, "-", k))
			l.Add(row)
		}
		b.CleanupExpired(25) // cleanup meets half as many keys as are written
		b.SnapshotFor(true)
		s, err := b.Snapshot(clock.ms)
		if err != nil {
			t.Fatal(err)
		}
		_, needs = writeTo(t, s, store)
	}
	var chain int64
	for _, h := range needs {
		chain += h.Size
	}
	full := int64(len(snapshotBlob(t, b, clock.ms)))
	if chain > 4*full {
		t.Fatalf("a restore reads %d bytes in %d files, %.1f× the %d bytes of the live state", chain, len(needs), float64(chain)/float64(full), full)
	}
}

// TestIncrementalDeltaRefusesOlderLink (a review's find): a delta capture
// holds the keys changed since the newest chain written when it was
// taken; a chain older than that, which a full snapshot written late to
// another storage made the newest there, lacks changes the capture never
// took. Its checkpoint is declined and the next one is written in full,
// instead of a delta without them (a map state wrote such a key as
// deleted).
func TestIncrementalDeltaRefusesOlderLink(t *testing.T) {
	for _, kind := range []string{"value", "map"} {
		t.Run(kind, func(t *testing.T) {
			clock, x, y := &fakeClock{ms: 1}, newMemStore("mem://x"), newMemStore("mem://y")
			b := incBackend(t, nil, clock, nil)
			put := func(k int64) {
				at(b, k)
				if kind == "value" {
					state.Value(b, state.ValueDescriptor[int64]{Name: "v", Codec: state.Int64Codec{}}).Update(k)
				} else {
					state.Map(b, incMap).Put("u", k)
				}
			}
			put(1)
			s1 := takeSnap(t, b) // full: no chain yet
			put(2)
			s2 := takeSnap(t, b) // full
			writeTo(t, s1, x)
			put(3)
			writeTo(t, takeSnap(t, b), x) // a delta on s1, holding key 3
			put(4)
			s4 := takeSnap(t, b) // a delta on s3: key 4 only
			writeTo(t, s2, y)    // the newest chain in y: s2, without key 3
			if _, _, err := s4.(state.IncrementalSnapshot).WriteFiles(y); err == nil {
				t.Fatal("a delta holding the changes since capture 3 extended capture 2's chain")
			}
			man, _ := writeTo(t, takeSnap(t, b), y) // in full
			r := incBackend(t, y, clock, man)
			for k := int64(1); k <= 4; k++ {
				at(r, k)
				var got int64
				if kind == "value" {
					got, _ = state.Value(r, state.ValueDescriptor[int64]{Name: "v", Codec: state.Int64Codec{}}).Value()
				} else {
					got, _ = state.Map(r, incMap).Get("u")
				}
				if got != k {
					t.Errorf("key %d: %d after the restore", k, got)
				}
			}
		})
	}
}
