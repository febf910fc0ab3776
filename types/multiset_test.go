package types

import "testing"

// Size counts duplicates and skips the entries an aggregate holds at zero
// or below while a retraction waits for its insertion.
func TestMultisetSize(t *testing.T) {
	m := MultisetValue{{Elem: "a", Count: 2}, {Elem: "b", Count: 1}, {Elem: "c", Count: -1}}
	if got := m.Size(); got != 3 {
		t.Fatalf("Size = %d, want 3", got)
	}
	if got := (MultisetValue{}).Size(); got != 0 {
		t.Fatalf("Size of an empty bag = %d, want 0", got)
	}
}

func TestMultisetTypeString(t *testing.T) {
	elem := Type{Kind: Int, Nullable: true}
	mt := Type{Kind: Multiset, Elem: &elem}
	if got, want := mt.String(), "MULTISET<INT> NOT NULL"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
