package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/sim"
	"github.com/weirstream/weir/runtime"
)

// The billing logic through the real runtime, with injected crashes and an
// exactly-once transactional sink: the final total of every account equals
// the ground truth computed directly from the events.
func TestTotalsExactlyOnceThroughCrashes(t *testing.T) {
	events, dups := Generate(GenOptions{Bills: 3000, Accounts: 25, DupRate: 0.05, DupDelay: 500, Spread: time.Second, Seed: 3})
	faults := sim.NewFaults(11, 5, map[string]float64{"process": 0.002, "commit": 0.1})
	store := sim.NewStore()
	env := weir.NewEnvironment().SetParallelism(2).EnableCheckpointing(10*time.Millisecond, weir.ExactlyOnce, t.TempDir())
	env.RuntimeOptions().Restart = runtime.FixedDelay{Attempts: 10}
	env.RuntimeOptions().BatchSize = 8
	src := weir.FromSlice(env, events, "bills")
	slow := weir.MapErr(src, func(b Bill) (Bill, error) {
		time.Sleep(20 * time.Microsecond)
		return b, faults.Maybe("process")
	})
	weir.SinkTo(Totals(slow, time.Hour), &sim.TxSink{Store: store, Faults: faults}, "account_totals")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := env.Execute(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if res.Restarts == 0 {
		t.Fatalf("no failure happened (faults fired: %v)", faults.Fired)
	}
	final := map[string]AccountTotal{}
	for _, v := range store.Committed() {
		at := v.(AccountTotal)
		if at.Count > final[at.AccountID].Count {
			final[at.AccountID] = at
		}
	}
	truth := Truth(events)
	if len(final) != len(truth) {
		t.Fatalf("%d accounts written, want %d", len(final), len(truth))
	}
	for id, want := range truth {
		got := final[id]
		if got.Count != want.Count || !got.Total.Equal(want.Total) {
			t.Errorf("account %s: total %s over %d bills, want %s over %d", id, got.Total, got.Count, want.Total, want.Count)
		}
	}
	// Every distinct bill produced exactly one committed running total.
	if n := len(store.Committed()); n != len(events)-dups {
		t.Errorf("%d totals committed, want %d (one per distinct bill)", n, len(events)-dups)
	}
	t.Logf("%d events, %d duplicates, %d restarts", len(events), dups, res.Restarts)
}
