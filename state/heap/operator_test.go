package heap

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/weirstream/weir/state"
)

// opBlobs snapshots one operator backend per entry of lists, each holding
// the "offsets" (even-split) and "members" (union) lists given.
func opBlobs(t *testing.T, lists ...[2][]string) [][]byte {
	var blobs [][]byte
	for _, l := range lists {
		b := NewOperatorBackend()
		state.OperatorList(b, state.ListDescriptor[string]{Name: "offsets"}, state.EvenSplit).Update(l[0])
		state.OperatorList(b, state.ListDescriptor[string]{Name: "members"}, state.Union).Update(l[1])
		s, err := b.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		blobs = append(blobs, write(t, s))
	}
	return blobs
}

func TestOperatorListRedistribution(t *testing.T) {
	blobs := opBlobs(t,
		[2][]string{{"a0", "a1", "a2"}, {"x"}},
		[2][]string{{"b0", "b1", "b2", "b3"}, {"y"}},
	)
	all := []string{"a0", "a1", "a2", "b0", "b1", "b2", "b3"}
	cases := []struct {
		parallelism int
		even        [][]string
	}{
		{3, [][]string{{"a0", "a1", "a2"}, {"b0", "b1"}, {"b2", "b3"}}},
		{1, [][]string{all}},
		{2, [][]string{{"a0", "a1", "a2", "b0"}, {"b1", "b2", "b3"}}},
		{8, [][]string{{"a0"}, {"a1"}, {"a2"}, {"b0"}, {"b1"}, {"b2"}, {"b3"}, nil}},
	}
	for _, c := range cases {
		for i := range c.parallelism {
			b := NewOperatorBackend()
			if err := b.Restore(blobs, i, c.parallelism); err != nil {
				t.Fatal(err)
			}
			even := state.OperatorList(b, state.ListDescriptor[string]{Name: "offsets"}, state.EvenSplit).Get()
			union := state.OperatorList(b, state.ListDescriptor[string]{Name: "members"}, state.Union).Get()
			if !reflect.DeepEqual(even, c.even[i]) {
				t.Errorf("parallelism %d, subtask %d: even split = %v, want %v", c.parallelism, i, even, c.even[i])
			}
			if !reflect.DeepEqual(union, []string{"x", "y"}) {
				t.Errorf("parallelism %d, subtask %d: union = %v, want [x y]", c.parallelism, i, union)
			}
		}
	}
}

func TestOperatorListSnapshotIsolation(t *testing.T) {
	b := NewOperatorBackend()
	l := state.OperatorList(b, state.ListDescriptor[int]{Name: "l"}, state.EvenSplit)
	for i := range 1000 {
		l.Add(i)
	}
	want := l.Get()
	s, _ := b.Snapshot()
	done := make(chan []byte)
	go func() {
		blob, _ := s.Write()
		done <- blob
	}()
	for i := range 1000 {
		l.Add(-i)
	}
	l.Update([]int{1})
	l.Clear()
	blob := <-done
	r := NewOperatorBackend()
	if err := r.Restore([][]byte{blob}, 0, 1); err != nil {
		t.Fatal(err)
	}
	if got := state.OperatorList(r, state.ListDescriptor[int]{Name: "l"}, state.EvenSplit).Get(); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored %d elements, want the %d as of Snapshot", len(got), len(want))
	}
}

func TestOperatorListUnregisteredSurvives(t *testing.T) {
	blobs := opBlobs(t, [2][]string{{"a"}, {"x"}})
	mid := NewOperatorBackend()
	if err := mid.Restore(blobs, 0, 1); err != nil {
		t.Fatal(err)
	}
	s, _ := mid.Snapshot()
	r := NewOperatorBackend()
	if err := r.Restore([][]byte{write(t, s)}, 0, 1); err != nil {
		t.Fatal(err)
	}
	if got := state.OperatorList(r, state.ListDescriptor[string]{Name: "members"}, state.Union).Get(); !reflect.DeepEqual(got, []string{"x"}) {
		t.Fatalf("members = %v", got)
	}
}

func TestOperatorErrors(t *testing.T) {
	blobs := opBlobs(t, [2][]string{{"a"}, {"x"}})
	b := NewOperatorBackend()
	if err := b.Restore(blobs, 0, 1); err != nil {
		t.Fatal(err)
	}
	panicsWith := func(want error, f func()) {
		t.Helper()
		if err, ok := mustPanic(t, f).(error); !ok || !errors.Is(err, want) {
			t.Errorf("panicked with %v, want %v", err, want)
		}
	}
	panicsWith(state.ErrIncompatible, func() {
		state.OperatorList(b, state.ListDescriptor[string]{Name: "offsets"}, state.Union) // restored as even-split
	})
	state.OperatorList(b, state.ListDescriptor[string]{Name: "new"}, state.Union)
	panicsWith(state.ErrIncompatible, func() {
		state.OperatorList(b, state.ListDescriptor[string]{Name: "new"}, state.EvenSplit)
	})
	panicsWith(state.ErrInvalidDescriptor, func() {
		state.OperatorList(b, state.ListDescriptor[string]{Name: "ttl", TTL: &state.TTLConfig{TTL: time.Second}}, state.Union)
	})
	if err := b.Restore(blobs, 0, 1); !errors.Is(err, state.ErrRestoreAfterUse) {
		t.Errorf("second Restore: %v", err)
	}
	if err := NewOperatorBackend().Restore(blobs, 2, 2); err == nil {
		t.Error("subtask 2 of 2 accepted")
	}
	for n := 1; n < len(blobs[0]); n++ {
		if err := NewOperatorBackend().Restore([][]byte{blobs[0][:n]}, 0, 1); !errors.Is(err, state.ErrCorrupt) {
			t.Fatalf("blob truncated to %d bytes: %v", n, err)
		}
	}
}
