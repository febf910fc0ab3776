package sim

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/runtime"
)

type pair struct {
	Key string
	N   int
}

func TestBoundedKeyedSumExactlyOnce(t *testing.T) {
	var in []pair
	want := map[string]int{}
	for i := 0; i < 5000; i++ {
		p := pair{Key: fmt.Sprintf("k%d", i%17), N: i}
		in = append(in, p)
		want[p.Key] += p.N
	}
	store := NewStore()
	env := weir.NewEnvironment().SetParallelism(2).
		EnableCheckpointing(20*time.Millisecond, weir.ExactlyOnce, t.TempDir())
	env.RuntimeOptions().Restart = runtime.NoRestart{}
	src := weir.FromSlice(env, in, "pairs")
	sums := weir.Reduce(weir.KeyBy(src, func(p pair) string { return p.Key }),
		func(a, b pair) pair { return pair{a.Key, a.N + b.N} })
	weir.SinkTo(sums, &TxSink{Store: store}, "tx")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := env.Execute(ctx, "sum")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	count := 0
	for _, v := range store.Committed() {
		p := v.(pair)
		count++
		if p.N > got[p.Key] {
			got[p.Key] = p.N
		}
	}
	if count != len(in) {
		t.Fatalf("committed %d running sums, want %d (one per input)", count, len(in))
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got[k] != want[k] {
			t.Errorf("key %s: final sum %d, want %d", k, got[k], want[k])
		}
	}
	if l := store.Lingering(); len(l) != 0 {
		t.Errorf("lingering transactions: %v", l)
	}
	t.Logf("checkpoints: %d", len(res.Checkpoints))
}
