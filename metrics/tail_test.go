package metrics

import (
	"fmt"
	"testing"
)

// TestTailBoundsAndDrops: a row reaches a reader only with a token (its
// sample rate) and only while its buffer has room — a full buffer drops
// the sample and counts it, never waits; every row offered while
// attached is seen. Detached, a reader is offered nothing.
func TestTailBoundsAndDrops(t *testing.T) {
	var tail Tail
	if tail.Readers() != nil {
		t.Fatal("a new tail has readers")
	}
	a, b := NewTailReader(2), NewTailReader(10)
	tail.Attach(a)
	tail.Attach(b)
	a.Refill(5)
	b.Refill(3)
	for i := range 8 { // as a subtask offers each row it emits
		for _, r := range tail.Readers() {
			if r.Take() {
				r.Put(Sample{Fields: []string{fmt.Sprint(i)}})
			}
		}
	}
	got := func(r *TailReader) (out []string) {
		for len(r.C) > 0 {
			out = append(out, (<-r.C).Fields[0])
		}
		return out
	}
	if s, d := fmt.Sprint(got(a)), a.Dropped(); s != "[0 1]" || d != 3 || a.Seen() != 8 {
		t.Errorf("reader a (5 tokens, buffer 2): got %s, dropped %d, seen %d; want [0 1], 3 dropped, 8 seen", s, d, a.Seen())
	}
	if s, d := fmt.Sprint(got(b)), b.Dropped(); s != "[0 1 2]" || d != 0 || b.Seen() != 8 {
		t.Errorf("reader b (3 tokens, buffer 10): got %s, dropped %d, seen %d; want [0 1 2], none dropped, 8 seen", s, d, b.Seen())
	}
	tail.Detach(a)
	if rs := tail.Readers(); len(rs) != 1 || rs[0] != b {
		t.Errorf("after detaching a: readers %v, want b only", rs)
	}
	tail.Detach(b)
	if tail.Readers() != nil {
		t.Errorf("after detaching both: readers %v", tail.Readers())
	}
}
