package session

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/sim"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/planner"
)

// schemaScript is INSERT INTO dst SELECT k, SUM(v), COUNT(*) FROM t GROUP
// BY k, where t's k and v have the types kType and vType.
func schemaScript(kType, vType string) string {
	return fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '20 ms';
CREATE TABLE src (k STRING) WITH ('connector' = 'held');
CREATE TABLE dst (k %[1]s, s %[2]s, n BIGINT) WITH ('connector' = 'tx');
CREATE VIEW t AS SELECT CAST(k AS %[1]s) AS k, CAST(k AS %[2]s) * 10 AS v FROM src;
INSERT INTO dst SELECT k, SUM(v), COUNT(*) FROM t GROUP BY k;`, kType, vType)
}

// heldSession is a session running script at parallelism par, reading
// src as the 'held' connector and committing the 'tx' connector into store.
func heldSession(t *testing.T, script string, src *heldRows, store *sim.Store, par int) *Session {
	t.Helper()
	s := New()
	s.Connectors.Sources["held"] = func(*catalog.Table) (operator.Source, error) { return src, nil }
	s.Connectors.Sinks["tx"] = func(*catalog.Table) (planner.SinkSpec, error) {
		return planner.SinkSpec{Sink: &sim.TxSink{Store: store}, AcceptsUpdates: true}, nil
	}
	if err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	s.Settings["parallelism.default"] = strconv.Itoa(par)
	s.Settings["execution.checkpointing.dir"] = filepath.Join(t.TempDir(), "checkpoints")
	return s
}

// A savepoint of a SQL group aggregation over (k INT, v BIGINT) does not
// restore into the same query over k STRING or v DOUBLE: the job fails to
// start, naming the operator and both schemas, instead of mixing BIGINT
// sums into DOUBLE ones. The unchanged script restores, exactly, at
// another parallelism (the schemas are the checkpoint's, not a subtask's); with
// --allow-non-restored-state the changed one starts its aggregation empty.
func TestSQLRestoreRefusesIncompatibleState(t *testing.T) {
	var keys []string
	for i := 0; i < 300; i++ {
		keys = append(keys, strconv.Itoa((i*7)%11))
	}
	store := sim.NewStore()
	src := &heldRows{Keys: keys, Splits: 1, Limit: int64(len(keys) / 2)}
	src.Release = make(chan struct{})
	path, _ := savepointMidRun(t, heldSession(t, schemaScript("INT", "BIGINT"), src, store, 2), src, store)

	restore := func(script string, st *sim.Store, allow bool) (*runtime.Result, error) {
		src := &heldRows{Keys: keys, Splits: 1, Limit: 1 << 62, Release: make(chan struct{})}
		return heldSession(t, script, src, st, 3).Run(context.Background(), "agg", func(o *runtime.Options) {
			o.Restore, o.IgnoreUnclaimedState = path, allow
		})
	}
	const op = `state of operator "GroupAggregate(groupBy=[k], select=[SUM(v), COUNT(*)])"`
	for _, c := range []struct{ k, v, now string }{
		{"STRING", "BIGINT", "this job has key (k STRING), state (SUM(v) BIGINT, COUNT(*) BIGINT), kept as binary rows"},
		{"INT", "DOUBLE", "this job has key (k INT), state (SUM(v) DOUBLE, COUNT(*) BIGINT), kept as binary rows"},
	} {
		t.Run(c.k+" "+c.v, func(t *testing.T) {
			_, err := restore(schemaScript(c.k, c.v), store.Clone(), false)
			if err == nil {
				t.Fatal("restored state written for other types")
			}
			for _, want := range []string{op, "was written for key (k INT), state (SUM(v) BIGINT, COUNT(*) BIGINT), kept as binary rows; " + c.now,
				"the state is not compatible; start without --restore, or restore with --allow-non-restored-state"} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q\ndoes not say %q", err, want)
				}
			}
		})
	}

	// Same types, other functions: a SUM's accumulator is no MAX's, and
	// swapped calls would swap their states.
	for _, c := range []struct{ name, script, now string }{
		{"MAX for SUM", strings.Replace(schemaScript("INT", "BIGINT"), "SUM(v)", "MAX(v)", 1),
			"this job has key (k INT), state (MAX(v) BIGINT, COUNT(*) BIGINT), kept as binary rows"},
		{"swapped", strings.Replace(schemaScript("INT", "BIGINT"), "SUM(v), COUNT(*)", "COUNT(*), SUM(v)", 1),
			"this job has key (k INT), state (COUNT(*) BIGINT, SUM(v) BIGINT), kept as binary rows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := restore(c.script, store.Clone(), false)
			if err == nil {
				t.Fatal("restored the state of other aggregate functions")
			}
			if want := "was written for key (k INT), state (SUM(v) BIGINT, COUNT(*) BIGINT), kept as binary rows; " + c.now; !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q\ndoes not say %q", err, want)
			}
		})
	}

	t.Run("unchanged", func(t *testing.T) {
		st := store.Clone()
		res, err := restore(schemaScript("INT", "BIGINT"), st, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.RestoredFrom == 0 {
			t.Fatal("did not restore the savepoint")
		}
		if got, want := materialize(t, st.Committed()), sumsOf(keys); got != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	})

	t.Run("allow-non-restored-state", func(t *testing.T) {
		st := store.Clone()
		if _, err := restore(schemaScript("INT", "DOUBLE"), st, true); err != nil {
			t.Fatal(err)
		}
		// The aggregation starts empty: it sums only the rows the source
		// reads after its restored position, and the rows the first run
		// committed stay as they were.
		half := len(keys) / 2
		both := strings.Split(sumsOf(keys[:half])+"\n"+sumsOf(keys[half:]), "\n")
		sort.Strings(both)
		if got, want := materialize(t, st.Committed()), strings.Join(both, "\n"); got != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	})
}

// sumsOf computes the query's result over keys directly.
func sumsOf(keys []string) string {
	sum, n := map[int]int64{}, map[int]int64{}
	for _, k := range keys {
		x, _ := strconv.Atoi(k)
		sum[x] += int64(x) * 10
		n[x]++
	}
	var out []string
	for k := range n {
		out = append(out, fmt.Sprint([]any{k, sum[k], n[k]}))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// Every keyed operator of a SQL job declares the schema of its state:
// deduplication (with its row-number Calc), Top-N, joins, two-phase
// aggregation's global phase.
func TestSQLKeyedOperatorsDeclareStateSchema(t *testing.T) {
	s := heldSession(t, `
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 s';
SET 'table.exec.mini-batch.size' = '100';
CREATE TABLE src (k STRING, pt AS PROCTIME()) WITH ('connector' = 'held');
CREATE TABLE a (k STRING, rn BIGINT) WITH ('connector' = 'tx');
CREATE TABLE b (k STRING, n BIGINT) WITH ('connector' = 'tx');
CREATE TABLE c (k STRING, k2 STRING) WITH ('connector' = 'tx');
INSERT INTO a SELECT k, rn FROM (SELECT k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt DESC) AS rn FROM src) WHERE rn = 1;
INSERT INTO a SELECT k, rn FROM (SELECT k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY k) AS rn FROM src) WHERE rn <= 3;
INSERT INTO b SELECT k, COUNT(*) FROM src GROUP BY k;
INSERT INTO c SELECT x.k, y.k FROM src AS x JOIN src AS y ON x.k = y.k;`, &heldRows{}, sim.NewStore(), 2)
	jg, _, err := s.Job("agg")
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]bool{}
	for _, v := range jg.Vertices {
		for _, n := range v.Nodes {
			if n.KeySelector == nil {
				continue
			}
			if n.StateSchema == nil {
				t.Errorf("keyed operator %s (uid %s) declares no state schema", n.Name, n.UID)
				continue
			}
			ops[n.Name] = true
		}
	}
	for _, want := range []string{"Deduplicate", "Rank", "GlobalGroupAggregate", "Join"} {
		if !ops[want] {
			t.Errorf("no %s with a state schema among %v", want, ops)
		}
	}
}

// distinctScript counts the distinct keys of src, and those of two
// characters, per key modulo 3.
const distinctScript = `
SET 'execution.checkpointing.interval' = '20 ms';
CREATE TABLE src (k STRING) WITH ('connector' = 'held');
CREATE TABLE dst (g INT, n BIGINT, m BIGINT, c BIGINT) WITH ('connector' = 'tx');
CREATE VIEW t AS SELECT CAST(k AS INT) % 3 AS g, k AS v FROM src;
INSERT INTO dst SELECT g, COUNT(DISTINCT v), COUNT(DISTINCT v) FILTER (WHERE CHAR_LENGTH(v) > 1), COUNT(*) FROM t GROUP BY g;`

// A savepoint of COUNT(DISTINCT) over an insert-only input keeps presence
// bits, not the values: restored into the same query over a changelog
// (its source now updating), which would need them to retract, the job
// fails to start, on the heap and on Pebble, naming both formats — Pebble
// decodes entries only when read, so without the fingerprint the job ran
// and committed before failing. Over the insert-only input it restores
// exactly.
func TestSQLRestoreRefusesDistinctBitsIntoRetracting(t *testing.T) {
	var keys []string
	for i := 0; i < 400; i++ {
		keys = append(keys, strconv.Itoa((i*7)%61))
	}
	for _, backend := range []string{"hashmap", "pebble"} {
		t.Run(backend, func(t *testing.T) {
			session := func(src *heldRows, store *sim.Store, updating bool) *Session {
				s := heldSession(t, distinctScript, src, store, 2)
				s.Connectors.Updating["held"] = updating
				s.Settings["state.backend.type"] = backend
				s.Settings["state.backend.local-dir"] = t.TempDir()
				return s
			}
			store := sim.NewStore()
			src := &heldRows{Keys: keys, Splits: 1, Limit: int64(len(keys) / 2), Release: make(chan struct{})}
			path, _ := savepointMidRun(t, session(src, store, false), src, store)
			restore := func(st *sim.Store, updating bool) (*runtime.Result, error) {
				src := &heldRows{Keys: keys, Splits: 1, Limit: 1 << 62, Release: make(chan struct{})}
				return session(src, st, updating).Run(context.Background(), "agg", func(o *runtime.Options) { o.Restore = path })
			}

			res, err := restore(store.Clone(), true)
			if err == nil {
				t.Fatal("restored presence bits into a query over a changelog")
			}
			for _, want := range []string{"kept as binary rows, shared distinct maps of presence bits; this job has",
				"kept as binary rows, shared distinct maps: the state is not compatible"} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q\ndoes not say %q", err, want)
				}
			}
			if res != nil && res.Restarts != 0 {
				t.Fatalf("%d restarts before failing", res.Restarts)
			}

			st := store.Clone()
			if res, err = restore(st, false); err != nil || res.RestoredFrom == 0 {
				t.Fatalf("restoring over the insert-only input: restored from %v, err %v", res, err)
			}
			if got, want := materialize(t, st.Committed()), distinctCountsOf(keys); got != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// distinctCountsOf computes distinctScript's result over keys directly.
func distinctCountsOf(keys []string) string {
	all, long, n := map[int]map[string]bool{}, map[int]map[string]bool{}, map[int]int64{}
	for _, k := range keys {
		x, _ := strconv.Atoi(k)
		g := x % 3
		if all[g] == nil {
			all[g], long[g] = map[string]bool{}, map[string]bool{}
		}
		all[g][k] = true
		if len(k) > 1 {
			long[g][k] = true
		}
		n[g]++
	}
	var out []string
	for g := range all {
		out = append(out, fmt.Sprint([]any{int32(g), int64(len(all[g])), int64(len(long[g])), n[g]}))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
