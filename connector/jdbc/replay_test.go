package jdbc

import (
	"errors"
	"strings"
	"testing"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/operator"
)

// Issue 11, bug 4: the sink committed checkpoint 2, then the job restored
// checkpoint 1 (checkpoint 2 was deleted or corrupt): going on would write
// checkpoint 2's rows again. Each exactly-once strategy knows what it
// committed and fails at open with a ReplayError naming both checkpoints
// and sink.allow-replay; with that option the replay is accepted.
func TestRestoreBehindCommittedCheckpoint(t *testing.T) {
	for _, strategy := range []Strategy{StrategyCheckpointTable, StrategyXA} {
		t.Run(string(strategy), func(t *testing.T) {
			eachDB(t, func(t *testing.T, db *testDB) { testRestoreBehind(t, db, strategy) })
		})
	}
}

func testRestoreBehind(t *testing.T, db *testDB, strategy Strategy) {
	tbl := db.table(t, "rb", "id INT NOT NULL, v INT")
	job := db.job(t)
	s := db.newSink(t, tbl, Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(strategy))
	if err := commit(t, s, wctx(job, 0, 1, 1), 1, writeAll(t, s, wctx(job, 0, 1, 0), 1, ins(1, 10))); err != nil {
		t.Fatal(err)
	}
	if err := commit(t, s, wctx(job, 0, 1, 2), 2, writeAll(t, s, wctx(job, 0, 1, 1), 2, ins(2, 20))); err != nil {
		t.Fatal(err)
	}

	_, err := s.CreateWriter(wctx(job, 0, 1, 1))
	var re *operator.ReplayError
	if !errors.As(err, &re) || re.Restored != 1 || re.Committed != 2 || !errors.Is(err, operator.ErrNonRestartable) ||
		!strings.Contains(err.Error(), "'sink.allow-replay' = 'true'") || !strings.Contains(err.Error(), "restored checkpoint 1") ||
		!strings.Contains(err.Error(), "checkpoint 2") {
		t.Fatalf("writer restored from checkpoint 1 = %v; want a non-restartable ReplayError naming checkpoints 1 and 2 and sink.allow-replay", err)
	}
	w, err := s.CreateWriter(wctx(job, 0, 1, 2)) // the checkpoint committed last: no replay
	if err != nil {
		t.Fatalf("writer restored from checkpoint 2: %v", err)
	}
	w.Close()

	replaying := db.newSink(t, tbl, Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(strategy), AllowReplay())
	cs := writeAll(t, replaying, wctx(job, 0, 1, 1), 3, ins(2, 20)) // checkpoint 2's row, replayed
	if err := commit(t, replaying, wctx(job, 0, 1, 3), 3, cs); err != nil {
		t.Fatal(err)
	}
	equal(t, "table after the accepted replay", db.rows(t, tbl), []string{"1|10", "2|20", "2|20"})
}

func TestAllowReplayOption(t *testing.T) {
	o, err := ParseOptions(map[string]string{"url": "jdbc:mysql://h/db", "table-name": "t", KeyAllowReplay: "true"})
	if err != nil || !o.AllowReplay {
		t.Fatalf("ParseOptions = %+v, %v; want AllowReplay", o.AllowReplay, err)
	}
	if _, err := ParseOptions(map[string]string{KeyAllowReplay: "yes please"}); err == nil ||
		!strings.Contains(err.Error(), "option 'sink.allow-replay'") {
		t.Fatalf("bad sink.allow-replay = %v, want an error naming it", err)
	}
}
