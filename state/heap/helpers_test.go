package heap

import (
	"hash/fnv"
	"iter"
	"testing"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
)

const maxPar = keygroup.DefaultMaxParallelism

// fakeClock is a settable processing-time clock, in ms.
type fakeClock struct{ ms int64 }

func (c *fakeClock) now() int64 { return c.ms }

// keyGroupOf hashes a key's AnyCodec encoding, as a runtime might.
func keyGroupOf(key any) int {
	h := fnv.New64a()
	h.Write(state.AnyCodec{}.Encode(nil, key))
	return keygroup.ForHash(h.Sum64(), maxPar)
}

// newSubtask returns the backend of subtask index of parallelism.
func newSubtask(t testing.TB, parallelism, index int, clock *fakeClock) *Backend {
	t.Helper()
	opts := Options{KeyGroupRange: keygroup.RangeFor(maxPar, parallelism, index)}
	if clock != nil {
		opts.Clock = clock.now
	}
	b, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// at sets the current key.
func at(b *Backend, key any) { b.SetCurrentKey(key, keyGroupOf(key)) }

func write(t testing.TB, s state.Snapshot) []byte {
	t.Helper()
	blob, err := s.Write()
	if err != nil {
		t.Fatal(err)
	}
	return blob
}

func snapshotBlob(t testing.TB, b *Backend, now int64) []byte {
	t.Helper()
	s, err := b.Snapshot(now)
	if err != nil {
		t.Fatal(err)
	}
	return write(t, s)
}

// restored returns a new single-subtask backend restored from blobs.
func restored(t testing.TB, clock *fakeClock, blobs ...[]byte) *Backend {
	t.Helper()
	b := newSubtask(t, 1, 0, clock)
	if err := b.Restore(blobs); err != nil {
		t.Fatal(err)
	}
	return b
}

// mustPanic runs f and returns what it panicked with.
func mustPanic(t *testing.T, f func()) (r any) {
	t.Helper()
	defer func() {
		r = recover()
		if r == nil {
			t.Fatal("did not panic")
		}
	}()
	f()
	return nil
}

// avg is an AggregateFunction computing a mean through a pointer
// accumulator that Add mutates in place.
type avg struct{}

type avgAcc struct{ Sum, Count int64 }

func (avg) CreateAccumulator() *avgAcc { return &avgAcc{} }
func (avg) Add(v int64, a *avgAcc) *avgAcc {
	a.Sum += v
	a.Count++
	return a
}
func (avg) GetResult(a *avgAcc) float64 { return float64(a.Sum) / float64(a.Count) }
func (avg) Merge(a, b *avgAcc) *avgAcc  { return &avgAcc{a.Sum + b.Sum, a.Count + b.Count} }

// atStr is a keyMap's entry under the string key k (zero when none).
func atStr[E any](m keyMap[E], k string) E {
	e, _ := m.getString(k)
	return e
}

// setVar sets *v, a package variable tests tune, to x until t ends.
func setVar[T any](t testing.TB, v *T, x T) {
	old := *v
	*v = x
	t.Cleanup(func() { *v = old })
}

// countEncoded decodes each key an encoded iterator yields and fails t
// unless its element is want's; it returns how many it yielded.
func countEncoded[E comparable](t *testing.T, seq iter.Seq2[[]byte, E], want map[any]E) int {
	t.Helper()
	n := 0
	for kb, e := range seq {
		k, err := decodeKey(state.AnyCodec{}, kb)
		if err != nil {
			t.Fatal(err)
		}
		if want[k] != e {
			t.Fatalf("key %q encoded with %v, want %v", k, e, want[k])
		}
		n++
	}
	return n
}
