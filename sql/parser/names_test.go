package parser

import (
	"maps"
	"slices"
	"testing"
)

func TestNamesOf(t *testing.T) {
	q, err := ParseQuery("SELECT a.x, `Quoted Col`, COUNT(*), b.*, s.r.f FROM a JOIN b ON a.id = b.`ID` " +
		"WHERE EXISTS (SELECT 1 FROM c WHERE c.k = a.k) GROUP BY a.x HAVING MAX(b.y) > 1")
	if err != nil {
		t.Fatal(err)
	}
	n := NamesOf(q)
	for _, w := range []string{"a", "x", "quoted col", "b", "id", "c", "k", "y", "s", "r", "f"} {
		if !n.Words[w] {
			t.Errorf("word %q missing from %v", w, slices.Sorted(maps.Keys(n.Words)))
		}
	}
	if got := slices.Sorted(maps.Keys(n.StarOf)); !slices.Equal(got, []string{"b"}) {
		t.Errorf("StarOf = %v, want [b]", got)
	}
}
