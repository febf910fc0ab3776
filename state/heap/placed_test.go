package heap

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// placedCodec is a string codec that keeps values in place
// (state.InPlace), except those ending in 7, kept as they are: a list of
// both kinds turns into elements.
type placedCodec struct{}

func (placedCodec) Encode(buf []byte, v string) []byte { return wire.AppendString(buf, v) }

func (placedCodec) Decode(b []byte) (string, []byte, error) { return state.StringCodec{}.Decode(b) }

func (placedCodec) IsImmutableType() bool { return true }

func (placedCodec) KeepsInPlace(v string) bool { return !strings.HasSuffix(v, "7") }

// View reads the string in b's bytes, not a copy of them.
func (placedCodec) View(b []byte) (string, error) {
	r := wire.NewReader(b)
	p := r.Bytes()
	if r.Err() != nil || r.Len() != 0 {
		return "", fmt.Errorf("%w: not one string", state.ErrCorrupt)
	}
	return unsafe.String(unsafe.SliceData(p), len(p)), nil
}

func newPlacedBackend(t testing.TB, r keygroup.Range, placed bool) *Backend {
	t.Helper()
	b, err := New(Options{KeyGroupRange: r, notPlaced: !placed})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func placedState(b *Backend) state.ListState[string] {
	return state.List(b, state.ListDescriptor[string]{Name: "p", Codec: placedCodec{}})
}

// TestPlacedTablesServeInPlaceStatesOnly: a list or value state whose
// codec keeps values in place and is immutable, without TTL, is a
// placedTable or placedValueTable, whatever the value state's kind; with a
// TTL, or another codec, a listTable or valueTable.
func TestPlacedTablesServeInPlaceStatesOnly(t *testing.T) {
	b := newPlacedBackend(t, keygroup.RangeFor(maxPar, 1, 0), true)
	placed, plain := state.Erase[string](placedCodec{}), state.Erase[string](state.StringCodec{})
	ttl := &state.TTLConfig{TTL: time.Minute}
	for _, c := range []struct {
		spec   state.StateSpec
		placed bool
	}{
		{state.StateSpec{Name: "a", Kind: state.KindList, Codec: placed}, true},
		{state.StateSpec{Name: "b", Kind: state.KindList, Codec: placed, TTL: ttl}, false},
		{state.StateSpec{Name: "c", Kind: state.KindList, Codec: plain}, false},
		{state.StateSpec{Name: "v", Kind: state.KindValue, Codec: placed}, true},
		{state.StateSpec{Name: "r", Kind: state.KindReducing, Codec: placed}, true},
		{state.StateSpec{Name: "g", Kind: state.KindAggregating, Codec: placed}, true},
		{state.StateSpec{Name: "vt", Kind: state.KindValue, Codec: placed, TTL: ttl}, false},
		{state.StateSpec{Name: "vc", Kind: state.KindValue, Codec: plain}, false},
	} {
		var tbl any
		var err error
		if c.spec.Kind == state.KindList {
			tbl, err = b.ListTable(c.spec)
		} else {
			tbl, err = b.ValueTable(c.spec)
		}
		if err != nil {
			t.Fatal(err)
		}
		_, list := tbl.(*placedTable)
		_, value := tbl.(*placedValueTable)
		if (list || value) != c.placed {
			t.Errorf("state %q: a %T", c.spec.Name, tbl)
		}
	}
}

// TestPlacedValuesReadInPlace: a value kept in place is read from the
// table's chunks, not copied; one kept as it is is the value added, and
// the list's values then are elements that hold nothing in the chunks.
func TestPlacedValuesReadInPlace(t *testing.T) {
	b := newPlacedBackend(t, keygroup.RangeFor(maxPar, 1, 0), true)
	l := placedState(b)
	at(b, "k")
	l.Add("placed")
	tbl := b.tables["p"].(*placedTable)
	got := l.Get()
	if !slices.Equal(got, []string{"placed"}) {
		t.Fatalf("list %q", got)
	}
	if !inChunks(tbl.chunks.view(), got[0]) {
		t.Error("a value kept in place was copied out of the chunks")
	}
	kept := strings.Clone("kept as it is 7")
	l.Add(kept)
	got = l.Get()
	if !slices.Equal(got, []string{"placed", kept}) {
		t.Fatalf("list %q", got)
	}
	if unsafe.StringData(got[1]) != unsafe.StringData(kept) {
		t.Error("a value kept as it is is not the value added")
	}
	if inChunks(tbl.chunks.view(), got[0]) {
		t.Error("a placed value turned into an element still lies in the chunks, which it would keep")
	}
}

// inChunks reports whether s's bytes lie in one of the chunks.
func inChunks(view chunkView, s string) bool {
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	for _, c := range slices.Concat(view...) {
		start := uintptr(unsafe.Pointer(unsafe.SliceData(c)))
		if p >= start && p+uintptr(len(s)) <= start+uintptr(len(c)) {
			return true
		}
	}
	return false
}

// TestPlacedMatchesListTable applies the same random writes to a list in
// a placedTable and in a listTable, with compactions made frequent, and
// compares every key's list after each round, and after restoring each
// side's full snapshot into a backend of the other kind at another
// parallelism.
func TestPlacedMatchesListTable(t *testing.T) {
	placedMatchesPlain(t, placedKind{
		write: func(op int, b *Backend, v string) {
			l := placedState(b)
			switch op % 10 {
			case 0:
				l.Update([]string{v, v + "1", v + "7"})
			case 1:
				l.Clear()
			case 2:
				l.AddAll([]string{v, v + "2"})
			case 3:
				l.Update(nil) // a Delete
			default:
				l.Add(v)
			}
		},
		read: func(b *Backend) string { return fmt.Sprintf("%q", placedState(b).Get()) },
		compactions: func(b *Backend) int {
			return b.tables["p"].(*placedTable).compactions
		},
	})
}

// placedKind is what placedMatchesPlain needs of one placed state.
type placedKind struct {
	// write applies write op (a random number) with value v to the
	// current key's state in b.
	write func(op int, b *Backend, v string)
	// read is the current key's state in b, as text.
	read        func(b *Backend) string
	compactions func(b *Backend) int
}

// placedMatchesPlain applies the same random writes to a state kept in
// place and to one kept in a plain table, with compactions made frequent,
// and compares every key's state after each round, and after restoring
// each side's full snapshot into a backend of the other kind at another
// parallelism.
func placedMatchesPlain(t *testing.T, kind placedKind) {
	setVar(t, &placedMinWaste, 512)
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { placedVersusPlain(t, seed, kind) })
	}
}

func placedVersusPlain(t *testing.T, seed uint64, kind placedKind) {
	whole := keygroup.RangeFor(maxPar, 1, 0)
	placed, plain := newPlacedBackend(t, whole, true), newPlacedBackend(t, whole, false)
	const keys = 200
	rng := rand.New(rand.NewPCG(seed, 7))
	for round := range 30 {
		for range 50 + rng.IntN(300) {
			k, op := incKey(rng.IntN(keys)), rng.IntN(1000)
			size := rng.IntN(300)
			if rng.IntN(100) == 0 { // records that need a larger chunk, or one of their own
				size = rng.IntN(2 * placeMaxRecord)
			}
			v := fmt.Sprint(rng.IntN(100000), strings.Repeat("x", size))
			at(placed, k)
			at(plain, k)
			kind.write(op, placed, v)
			kind.write(op, plain, v)
		}
		comparePlaced(t, kind, placed, plain, keys, whole, fmt.Sprint("round ", round))
	}
	if kind.compactions(placed) == 0 {
		t.Error("no compaction: the test does not reach it")
	}
	for i := range 2 {
		r := keygroup.RangeFor(maxPar, 2, i)
		fromPlaced, fromPlain := newPlacedBackend(t, r, false), newPlacedBackend(t, r, true)
		if err := fromPlaced.Restore([][]byte{snapshotBlob(t, placed, 0)}); err != nil {
			t.Fatal(err)
		}
		if err := fromPlain.Restore([][]byte{snapshotBlob(t, plain, 0)}); err != nil {
			t.Fatal(err)
		}
		comparePlaced(t, kind, fromPlain, fromPlaced, keys, r, fmt.Sprint("restored at parallelism 2, subtask ", i))
		comparePlaced(t, kind, placed, fromPlain, keys, r, fmt.Sprint("the placed table's restored plain table's, subtask ", i))
		if kind.compactions(fromPlain) != 0 {
			t.Fatal("restored a compaction")
		}
	}
}

// comparePlaced compares kind's state of keys in range r of two
// backends.
func comparePlaced(t *testing.T, kind placedKind, a, b *Backend, keys int, r keygroup.Range, what string) {
	t.Helper()
	for k := range keys {
		if !r.Contains(keyGroupOf(incKey(k))) {
			continue
		}
		at(a, incKey(k))
		at(b, incKey(k))
		if ga, gb := kind.read(a), kind.read(b); ga != gb {
			t.Fatalf("%s: key %v: %.80s against %.80s", what, incKey(k), ga, gb)
		}
	}
}

// TestPlacedSnapshotWhileAppending writes a snapshot on another goroutine
// while the subtask appends to the captured lists (filling chunks and
// making new ones) and compacts: the restored snapshot holds the lists as
// they were at the capture. Run with -race.
func TestPlacedSnapshotWhileAppending(t *testing.T) {
	setVar(t, &placedMinWaste, 4<<10)
	whole := keygroup.RangeFor(maxPar, 1, 0)
	b := newPlacedBackend(t, whole, true)
	l := placedState(b)
	want := map[string][]string{}
	for j := range 30000 {
		k := fmt.Sprint("k", j%50)
		at(b, k)
		v := fmt.Sprint(j, "-", strings.Repeat("v", j%100))
		l.Add(v)
		want[k] = append(want[k], v)
	}
	blob := writeWhile(t, b, func(j int) {
		at(b, fmt.Sprint("k", j%60))
		switch {
		case j%20 == 0: // a chunk of its own: the chunks' list grows
			l.Add(strings.Repeat("big", placeMaxRecord/3+1))
		case j%997 == 0:
			l.Clear()
		case j%13 == 0:
			l.Update([]string{"u", fmt.Sprint(j)})
		default:
			l.Add(fmt.Sprint("after-", j, strings.Repeat("w", j%50)))
		}
	})
	r := newPlacedBackend(t, whole, true)
	if err := r.Restore([][]byte{blob}); err != nil {
		t.Fatal(err)
	}
	rl := placedState(r)
	for j := range 60 {
		k := fmt.Sprint("k", j)
		at(r, k)
		if got := rl.Get(); !slices.Equal(got, want[k]) {
			t.Fatalf("key %s restored as %d values, want %d", k, len(got), len(want[k]))
		}
	}
}

// TestPlacedRecordsOfEverySize places values of sizes either side of the
// first chunk's, of the chunks' as they double, and of the largest record
// a chunk shares, in lists and values, and restores a plain table's
// checkpoint of them into placed ones (a reviewer's find: a record larger
// than its group's next chunk but shared panicked).
func TestPlacedRecordsOfEverySize(t *testing.T) {
	whole := keygroup.RangeFor(maxPar, 1, 0)
	var sizes []int
	for s := firstChunk / 2; s <= 2*placeMaxRecord; s *= 2 {
		sizes = append(sizes, s-recordHead-8, s-recordHead, s+1)
	}
	placed, plain := newPlacedBackend(t, whole, true), newPlacedBackend(t, whole, false)
	for _, b := range []*Backend{placed, plain} {
		for j, size := range sizes {
			at(b, fmt.Sprint("k", j%3)) // keys of one group and others
			placedState(b).Add(strings.Repeat("l", size))
			placedValueState(b).Update(strings.Repeat("v", size))
		}
	}
	restored := newPlacedBackend(t, whole, true)
	if err := restored.Restore([][]byte{snapshotBlob(t, plain, 0)}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []*Backend{placed, restored} {
		for k := range 3 {
			at(b, fmt.Sprint("k", k))
			var want []string
			for j := k; j < len(sizes); j += 3 {
				want = append(want, strings.Repeat("l", sizes[j]))
			}
			if got := placedState(b).Get(); !slices.Equal(got, want) {
				t.Errorf("key k%d: a list of %d values, want %d", k, len(got), len(want))
			}
			last := sizes[k+3*((len(sizes)-1-k)/3)]
			if got, _ := placedValueState(b).Value(); got != strings.Repeat("v", last) {
				t.Errorf("key k%d: a value of %d bytes, want %d", k, len(got), last)
			}
		}
	}
}

// writeWhile writes a snapshot of b on another goroutine while the
// subtask calls mutate with 0 to 19,999, and returns its blob.
func writeWhile(t *testing.T, b *Backend, mutate func(j int)) []byte {
	t.Helper()
	snap, err := b.Snapshot(0)
	if err != nil {
		t.Fatal(err)
	}
	var blob []byte
	var wg sync.WaitGroup
	wg.Go(func() { blob = write(t, snap) })
	for j := range 20000 {
		mutate(j)
	}
	wg.Wait()
	return blob
}

// TestPlacedRestoreRefusesCorruptList: a list payload cut short is an
// error naming the state, not a panic or a shorter list.
func TestPlacedRestoreRefusesCorruptList(t *testing.T) {
	whole := keygroup.RangeFor(maxPar, 1, 0)
	b := newPlacedBackend(t, whole, true)
	l := placedState(b)
	at(b, "k")
	l.AddAll([]string{"one", "two"})
	r := newPlacedBackend(t, whole, true)
	spec := state.StateSpec{Name: "p", Kind: state.KindList, Codec: state.Erase[string](placedCodec{})}
	tbl := newPlacedTable(r, spec, state.InPlaceOf(spec.Codec))
	p, _ := b.tables["p"].(*placedTable).encode(nil, atStr(b.tables["p"].(*placedTable).data.maps[keyGroupOf("k")], "k"), 0)
	if _, _, err := tbl.decode(p[:len(p)-2], false, 0); err == nil {
		t.Fatal("a cut payload restored")
	}
	e, live, err := tbl.decode(p, false, 0)
	if err != nil || !live || e.len() != 2 {
		t.Fatalf("the whole payload: %d values, %v, %v", e.len(), live, err)
	}
}

// TestPlacedElementsAppendInPlace: a list of elements (a value kept as it
// is among its values) grows as listTable's does, not by a copy of the
// whole list at each Add (a reviewer's find: 830 KB per Add at 20,000).
func TestPlacedElementsAppendInPlace(t *testing.T) {
	b := newPlacedBackend(t, keygroup.RangeFor(maxPar, 1, 0), true)
	l := placedState(b)
	at(b, "k")
	for j := range 20000 {
		l.Add(fmt.Sprint(j, "7"))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for j := range 1000 {
		l.Add(fmt.Sprint(j, "7"))
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 1000; per > 4<<10 {
		t.Errorf("%d bytes allocated per Add to a list of 20,000 elements", per)
	}
	if got := l.Get(); len(got) != 21000 || got[20000] != "07" || got[19999] != "199997" {
		t.Fatalf("%d values, or out of order", len(got))
	}
}

// TestPlacedElementsHoldNoChunks: lists of elements replaced again and
// again leave nothing in the chunks to grow without end (a reviewer's
// find: 19 MB of chunks for a state of two values).
func TestPlacedElementsHoldNoChunks(t *testing.T) {
	b := newPlacedBackend(t, keygroup.RangeFor(maxPar, 1, 0), true)
	l := placedState(b)
	at(b, "k")
	big := strings.Repeat("v", 1000)
	for j := range 20000 {
		l.Update([]string{fmt.Sprint(j, "7"), big})
	}
	held := 0
	for _, c := range slices.Concat(b.tables["p"].(*placedTable).chunks.view()...) {
		held += len(c)
	}
	if held > 1<<20 {
		t.Errorf("the chunks hold %d bytes for a state of two values", held)
	}
	if got := l.Get(); !slices.Equal(got, []string{"199997", big}) {
		t.Fatalf("list %.40q", got)
	}
}

// TestPlacedLargeRecordsOwnChunks: a record larger than placeMaxRecord
// gets a chunk of its own even when the room left in its group's chunk
// would hold it (a reviewer's find: encoding where the record goes put it
// in the shared chunk).
func TestPlacedLargeRecordsOwnChunks(t *testing.T) {
	b := newPlacedBackend(t, keygroup.RangeFor(maxPar, 1, 0), true)
	l := placedState(b)
	at(b, "k")
	for range 3000 { // the group's chunks grow to 256 KB
		l.Add(strings.Repeat("x", 100))
	}
	g := &b.tables["p"].(*placedTable).chunks.groups[keyGroupOf("k")]
	if len(g.list[g.cur])-g.fill < 2*placeMaxRecord {
		t.Fatalf("%d bytes of room: the test does not reach the case", len(g.list[g.cur])-g.fill)
	}
	big := strings.Repeat("y", placeMaxRecord)
	for range 3 {
		before := len(g.list)
		l.Add(big)
		if len(g.list) != before+1 || len(g.list[before]) != recordHead+len(placedCodec{}.Encode(nil, big)) {
			t.Fatalf("a record of %d bytes went into a shared chunk", len(big))
		}
	}
	l.Add("small")
	if got := l.Get(); len(got) != 3004 || got[3000] != big || got[3003] != "small" {
		t.Fatalf("%d values", len(got))
	}
}
