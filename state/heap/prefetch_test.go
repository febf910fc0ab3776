package heap

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/state"
)

// TestMapPrefetchLooksUpAndChangesNothing: a map table's Prefetch looks
// up exactly the user keys present under keys of the subtask's key
// groups — short ones; a long one, an absent key or user key, a key of
// another subtask's group are skipped without a panic — and changes no
// entry. The subtask's key groups do not start at 0. Some keys hold one
// user key, inline (ukMap).
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
		}
		mt.Put(long, int64(-i))
	}
	for i := 60; i < 65; i++ { // one user key each, inline
		if k := fmt.Sprint("k", i); r.Contains(keyGroupOf(k)) {
			at(b, k)
			mt.Put("u3", int64(i))
		}
	}
	if mine < 10 || mine > 50 {
		t.Fatalf("%d of 60 keys in subtask 0's groups; the test wants some on either side", mine)
	}
	var as []state.Ahead
	want := uint64(0)
	for i := range 70 { // keys 65 to 69 hold nothing
		k := fmt.Sprint("k", i)
		kg := keyGroupOf(k)
		for j := range 12 { // user keys u10, u11 are absent
			as = append(as, state.Ahead{Key: k, KeyGroup: kg, UK: fmt.Sprint("u", j)})
			if (i < 60 && j < 10 || i < 65 && j == 3) && r.Contains(kg) {
				want++
			}
		}
		as = append(as, state.Ahead{Key: k, KeyGroup: kg, UK: long})
	}
	p := mt.(*mapTable)
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
	if p.ahead.found != want {
		t.Fatalf("Prefetch found %d user keys, want %d", p.ahead.found, want)
	}
	if after := dump(); after != before {
		t.Fatal("the state changed after Prefetch")
	}
	p.Prefetch(nil)
	if p.ahead.found != 0 {
		t.Fatalf("Prefetch of nothing found %d", p.ahead.found)
	}
}
