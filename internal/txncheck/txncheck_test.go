package txncheck

import (
	"slices"
	"testing"
)

// A transaction counts as left behind only when every listing shows it:
// another job's in-flight transactions come and go between listings.
func TestLingering(t *testing.T) {
	listings := [][]string{
		{"other:1", "mine:7"},
		{"other:2", "mine:7"},
		{"mine:7", "other:3"},
	}
	i := 0
	list := func() ([]string, error) { i++; return listings[i-1], nil }
	got, err := Lingering(list, 3, 0)
	if err != nil || !slices.Equal(got, []string{"mine:7"}) || i != 3 {
		t.Fatalf("lingering %v (%v) after %d listings, want [mine:7] after 3", got, err, i)
	}
	// Nothing shared: it stops as soon as no candidate is left.
	listings, i = [][]string{{"a"}, {"b"}, {"c"}}, 0
	if got, _ := Lingering(list, 3, 0); got != nil || i != 2 {
		t.Fatalf("lingering %v after %d listings, want none after 2", got, i)
	}
	// An empty first listing answers at once.
	listings, i = [][]string{{}}, 0
	if got, _ := Lingering(list, 3, 0); got != nil || i != 1 {
		t.Fatalf("lingering %v after %d listings, want none after 1", got, i)
	}
}
