package heap

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/state"
)

// TestMapPrefetchLooksUpAndChangesNothing: a map table's Prefetch reads
// the home slot of every word user key under a key of the subtask's key
// groups whose map has a table of words, present in it or not, and looks
// up the other short user keys, finding exactly those present; a long
// user key, an absent key, a key of another subtask's group are skipped
// without a panic; no entry changes. The subtask's key groups do not
// start at 0. Some keys hold one user key, inline (ukMap), and no table.
func TestMapPrefetchLooksUpAndChangesNothing(t *testing.T) {
	b := newSubtask(t, 2, 1, nil)
	mt, err := b.MapTable(state.StateSpec{Name: "m", Kind: state.KindMap, Codec: state.Erase(state.Int64Codec{}),
		UserKeyCodec: state.Erase(state.StringCodec{})})
	if err != nil {
		t.Fatal(err)
	}
	long := "a user key longer than a short key's room"
	r := b.KeyGroupRange()
	mine := 0
	for i := range 60 {
		k := fmt.Sprint("k", i)
		if !r.Contains(keyGroupOf(k)) {
			continue
		}
		mine++
		at(b, k)
		for j := range 10 {
			mt.Put(fmt.Sprint("u", j), int64(i*j))
			mt.Put(fmt.Sprint("user key ", j), int64(i*j+1))
		}
		mt.Put(long, int64(-i))
	}
	for i := 60; i < 65; i++ { // one user key each, inline
		if k := fmt.Sprint("k", i); r.Contains(keyGroupOf(k)) {
			at(b, k)
			mt.Put("user key 3", int64(i))
		}
	}
	if mine < 10 || mine > 50 {
		t.Fatalf("%d of 60 keys in subtask 0's groups; the test wants some on either side", mine)
	}
	p := mt.(*mapTable)
	var as []state.Ahead
	want, wantRead, wantSum := uint64(0), 0, wordKey(0)
	for i := range 70 { // keys 65 to 69 hold nothing
		k := fmt.Sprint("k", i)
		kg := keyGroupOf(k)
		for j := range 12 { // user keys u10, u11 and user key 10, 11 are absent
			uk := fmt.Sprint("u", j)
			as = append(as, state.Ahead{Key: k, KeyGroup: kg, UK: uk},
				state.Ahead{Key: k, KeyGroup: kg, UK: fmt.Sprint("user key ", j)})
			if !r.Contains(kg) {
				continue
			}
			if i < 60 { // a word in a table: its home slot read, present or not
				e, _ := p.data.maps[kg-r.Start].getString(k)
				wk, _ := word(uk)
				wantRead, wantSum = wantRead+1, wantSum+e.m.w.slots[e.m.w.home(wk)].k
			}
			if i < 60 && j < 10 || i < 65 && j == 3 {
				want++
			}
		}
		as = append(as, state.Ahead{Key: k, KeyGroup: kg, UK: long})
	}
	dump := func() string {
		var out []string
		for i := range 65 {
			k := fmt.Sprint("k", i)
			if r.Contains(keyGroupOf(k)) {
				at(b, k)
				mt.Range(func(uk, v any) bool { out = append(out, fmt.Sprint(k, uk, v)); return true })
			}
		}
		slices.Sort(out)
		return strings.Join(out, ";")
	}
	before := dump()
	p.Prefetch(as)
	if p.ahead.found != want || p.ahead.read != wantRead || p.ahead.sum != wantSum {
		t.Fatalf("Prefetch found %d short user keys and read %d words' home slots (keys' sum %#x), want %d, %d (%#x)",
			p.ahead.found, p.ahead.read, p.ahead.sum, want, wantRead, wantSum)
	}
	if after := dump(); after != before {
		t.Fatal("the state changed after Prefetch")
	}
	p.Prefetch(nil)
	if p.ahead.found != 0 || p.ahead.read != 0 || p.ahead.sum != 0 {
		t.Fatalf("Prefetch of nothing found %d, read %d (sum %#x)", p.ahead.found, p.ahead.read, p.ahead.sum)
	}
}
