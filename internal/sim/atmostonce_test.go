package sim

import (
	"context"
	"testing"
	"time"

	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/task"
)

// At-most-once: no checkpoints; a restart resumes sources where they
// stopped, so nothing is ever delivered twice (in-flight data may be lost).
func TestAtMostOnceNeverReplays(t *testing.T) {
	keys, perKey := 6, 300
	f := NewFaults(7, 4, map[string]float64{"process": 0.004})
	v := &Violations{}
	store := NewStore()
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 3, Burst: 20, Pause: time.Millisecond}
	sink := &TxSink{Store: store, AtLeastOnce: true}
	jg, err := buildSoakGraph(src, f, v, sink).JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	opts := runtime.Options{Mode: task.AtMostOnce, Restart: runtime.FixedDelay{Attempts: 10}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := runtime.Run(ctx, jg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if f.Count() < 3 || res.Restarts < 1 {
		t.Fatalf("only %d failures, %d restarts", f.Count(), res.Restarts)
	}
	count := map[Seq]int{}
	for _, x := range store.Committed() {
		count[x.(Seq)]++
	}
	for s, n := range count {
		if n > 1 {
			t.Errorf("element %+v delivered %d times in at-most-once mode", s, n)
		}
		if s.Key >= keys || s.Seq >= perKey {
			t.Errorf("element %+v is not in the input", s)
		}
	}
	if g := v.Gaps.Load(); g == 0 {
		t.Logf("no gaps: crashes lost no in-flight data this time")
	}
	if len(count) == 0 || len(count) > keys*perKey {
		t.Fatalf("%d distinct elements delivered", len(count))
	}
	t.Logf("delivered %d of %d elements after %d restarts", len(count), keys*perKey, res.Restarts)
}
