package pebble

import "testing"

// The list merger joins operands oldest first, whichever side they come
// from (Pebble's associativity contract).
func TestListMergerOrder(t *testing.T) {
	m, _ := listMerger.Merge(nil, []byte("c"))
	_ = m.MergeOlder([]byte("b"))
	_ = m.MergeOlder([]byte("a"))
	_ = m.MergeNewer([]byte("d"))
	if got, _, _ := m.Finish(true); string(got) != "abcd" {
		t.Fatalf("merged %q, want abcd", got)
	}
	m, _ = listMerger.Merge(nil, []byte("a"))
	_ = m.MergeNewer([]byte("b"))
	if got, _, _ := m.Finish(true); string(got) != "ab" {
		t.Fatalf("merged %q, want ab", got)
	}
}
