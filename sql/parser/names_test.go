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

func TestNamesCountsTableArgs(t *testing.T) {
	q, err := ParseQuery("SELECT b.x FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) " +
		"JOIN bid b ON TRUE JOIN TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)) ON TRUE")
	if err != nil {
		t.Fatal(err)
	}
	n := NamesOf(q)
	if n.Uses["bid"] != 3 || n.TableArgs["bid"] != 2 || n.TableArgs["ts"] != 0 {
		t.Errorf("bid used %d times, %d after TABLE; ts %d after TABLE; want 3, 2, 0", n.Uses["bid"], n.TableArgs["bid"], n.TableArgs["ts"])
	}
}
