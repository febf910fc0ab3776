package heap

import (
	"fmt"
	"testing"
)

// TestGroupsTrackPartialChanges: the changed-key records behind the next
// incremental delta. A key only appended to keeps the length it had at its
// first append (the delta holds the elements from there); a map written
// in some user keys keeps each of them; a key changed wholly stays whole.
// Deltas without these records would still be right, only larger, so no
// restore test sees them go.
func TestGroupsTrackPartialChanges(t *testing.T) {
	var ver uint64 = 1
	g := newGroups[int](1, &ver, true, true)
	g.putAppend(0, "list", 1, 5)
	g.putAppend(0, "list", 2, 6) // a later append keeps the first length
	g.putUK(0, "map", 1, "u1")
	g.putUK(0, "map", 2, "u2")
	g.putAppend(0, "whole", 1, 3)
	g.put(0, "whole", 2)          // changed otherwise: whole
	g.putAppend(0, "whole", 3, 9) // and stays whole
	g.putUK(0, "mixed", 1, "u1")  // user keys of two kinds: the
	g.putUK(0, "mixed", 2, 7)     // second's map is made after the first's
	g.putUK(0, "mixed", 3, 8)
	dirty, uks := g.takeDirty()
	got := fmt.Sprint(dirty[0].len(), dirty[0].s["list"], dirty[0].s["map"], dirty[0].s["whole"], uks[0].len(), uks[0].s["map"].len())
	if want := "4 5 -1 -1 2 2"; got != want {
		t.Fatalf("changed keys, list's record, map's, whole's, partial maps, user keys of map: %s, want %s", got, want)
	}
	for _, uk := range []string{"u1", "u2"} {
		if _, ok := uks[0].s["map"].s[uk]; !ok {
			t.Errorf("user key %s of map not recorded: %v", uk, uks[0].s["map"])
		}
	}
	if mixed := uks[0].s["mixed"]; fmt.Sprint(mixed.s, mixed.a) != "map[u1:{}] map[7:{} 8:{}]" {
		t.Errorf("user keys of mixed: %v %v, want u1, 7 and 8", mixed.s, mixed.a)
	}
}
