package heap

import (
	"runtime"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/state"
)

type userID string

type flat struct {
	N    int64
	Name string
	At   time.Time
	Amt  decimal.Decimal
	Pair [2]float64
}

type withSlice struct {
	N    int
	Tags []string
}

func TestImmutable(t *testing.T) {
	for _, c := range []struct {
		v    any
		want bool
	}{
		{nil, true}, {true, true}, {int8(1), true}, {uint64(1), true}, {1.5, true}, {complex(1, 2), true},
		{"s", true}, {userID("u"), true}, {time.Now(), true}, {decimal.NewFromInt(3), true},
		{flat{}, true}, {[3]flat{}, true}, {time.Second, true},
		{[]byte("b"), false}, {&flat{}, false}, {withSlice{}, false}, {[1]withSlice{}, false},
		{map[string]int{}, false}, {[]any{1}, false}, {struct{ V any }{1}, false},
	} {
		// Twice: the second answer for an array or struct comes from the cache.
		for range 2 {
			if got := immutable(c.v); got != c.want {
				t.Errorf("immutable(%#v) = %v, want %v", c.v, got, c.want)
			}
		}
	}
}

// countingCodec is GobCodec[T] with a Copier that counts its copies.
type countingCodec[T any] struct {
	state.GobCodec[T]
	copies *int
	copy   func(T) T
}

func (c countingCodec[T]) Copy(v T) T {
	*c.copies++
	return c.copy(v)
}

func TestCopierIsUsedAndImmutableValuesAreNotCopied(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	var ptrCopies, flatCopies int
	ptr := state.Value(b, state.ValueDescriptor[*tally]{Name: "ptr", Codec: countingCodec[*tally]{
		copies: &ptrCopies,
		copy:   func(x *tally) *tally { return &tally{x.Count, append([]string(nil), x.Seen...)} },
	}})
	fl := state.Value(b, state.ValueDescriptor[flat]{Name: "flat", Codec: countingCodec[flat]{
		copies: &flatCopies,
		copy:   func(x flat) flat { return x },
	}})
	at(b, 1)
	stored := &tally{Count: 7}
	ptr.Update(stored)
	fl.Update(flat{N: 7})
	s := snapshotOf(t, b)
	got, _ := ptr.Value()
	fl.Value()
	if ptrCopies != 1 || got == stored || got.Count != 7 {
		t.Fatalf("pointer value: %d copies, got %p %+v, stored %p", ptrCopies, got, got, stored)
	}
	if flatCopies != 0 {
		t.Fatalf("immutable value copied %d times", flatCopies)
	}
	write(t, s)
}

// TestUnwrittenSnapshotLands drops a snapshot without writing it: once it
// is garbage, reads stop copying.
func TestUnwrittenSnapshotLands(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	snapshotOf(t, b)
	deadline := time.Now().Add(10 * time.Second)
	for b.inFlight.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d snapshots still in flight", b.inFlight.Load())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}
