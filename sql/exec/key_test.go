package exec

import (
	"fmt"
	"testing"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state/heap"
)

// TestSetKeyBoxesTheKeyOnly: setKey puts a key in the key group ForKey
// gives it, and a new current key costs one allocation, its box in the
// backend; hashing it boxed it once more (Nexmark q4, q7, q18, q20: one
// object per event).
func TestSetKeyBoxesTheKeyOnly(t *testing.T) {
	b, err := heap.New(heap.Options{KeyGroupRange: keygroup.Range{Start: 0, End: maxPar - 1}, MaxParallelism: maxPar})
	if err != nil {
		t.Fatal(err)
	}
	ctx := &operator.Context{Keyed: b, MaxParallelism: maxPar}
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = RowKey([]any{int64(i), fmt.Sprint("k", i)}, []int{0, 1})
		setKey(ctx, keys[i])
		if got, want := b.CurrentKey(), any(keys[i]); got != want {
			t.Fatalf("current key %q, want %q", got, want)
		}
		r := keygroup.Range{Start: keygroup.ForKey(keys[i], maxPar), End: keygroup.ForKey(keys[i], maxPar)}
		narrow, err := heap.New(heap.Options{KeyGroupRange: r, MaxParallelism: maxPar})
		if err != nil {
			t.Fatal(err)
		}
		setKey(&operator.Context{Keyed: narrow, MaxParallelism: maxPar}, keys[i]) // panics outside r
	}
	i := 0
	if n := testing.AllocsPerRun(200, func() { setKey(ctx, keys[i%len(keys)]); i++ }); n > 1 {
		t.Fatalf("setKey of a new key made %.1f allocations, want 1 (the key's box)", n)
	}
}
