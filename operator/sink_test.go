package operator

import (
	"fmt"
	"testing"

	"github.com/weirstream/weir/event"
)

func TestCommitLogDueAndRoundTrip(t *testing.T) {
	l := NewCommitLog()
	l.Add(3, [][]byte{[]byte("c3")})
	l.Add(1, [][]byte{[]byte("c1a"), []byte("c1b")})
	l.Add(2, nil) // nothing pre-committed: not recorded
	l.Add(5, [][]byte{[]byte("c5")})
	if got := fmt.Sprint(l.Due(3)); got != "[1 3]" {
		t.Fatalf("Due(3) = %s, want [1 3]", got)
	}
	r := NewCommitLog()
	if err := r.DecodeInto(l.Encode()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []event.CheckpointID{1, 3, 5} {
		if fmt.Sprintf("%q", r.Get(id)) != fmt.Sprintf("%q", l.Get(id)) {
			t.Fatalf("checkpoint %d: %q after round trip, want %q", id, r.Get(id), l.Get(id))
		}
	}
	r.Committed(1)
	r.Committed(3)
	if got := fmt.Sprint(r.Due(10)); got != "[5]" {
		t.Fatalf("after commits Due(10) = %s, want [5]", got)
	}
	if err := NewCommitLog().DecodeInto([]byte{5, 1}); err == nil {
		t.Fatal("truncated log decoded without error")
	}
}
