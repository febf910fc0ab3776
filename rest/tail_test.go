package rest

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weirstream/weir/rest/api"
)

// tailOf reads the tail of a vertex until its stream ends (limit rows),
// returning the rows and the last stats.
func tailOf(t *testing.T, c *cluster, job, vertex string, rate, limit int) ([]api.TailRow, api.TailStats) {
	t.Helper()
	var rows []api.TailRow
	var last api.TailStats
	cl := c.client("")
	err := cl.Tail(context.Background(), job, vertex, rate, limit, func(e api.TailEvent) error {
		if e.Row != nil {
			rows = append(rows, *e.Row)
		}
		if e.Stats != nil {
			last = *e.Stats
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, last
}

// The tail of a sink vertex shows rows its sink received: each of 20
// sampled numbers reaches the slow sink, as an insert of subtask 0; the
// stream ends at the limit with stats counting them.
func TestContractTailRows(t *testing.T) {
	c := newCluster(t)
	id, sink := slowJob(t, c)
	var d api.JobDetails
	get(t, c, "/v1/jobs/"+id, &d)
	rows, st := tailOf(t, c, id, d.Vertices[1].ID, 100, 20)
	if len(rows) != 20 || st.Ended != "limit" || st.Sampled != 20 || st.Seen < 20 || st.Rate != 100 {
		t.Fatalf("tail: %d rows, stats %+v; want 20 rows and the stream ended at the limit", len(rows), st)
	}
	for _, r := range rows {
		n, err := strconv.ParseInt(r.Fields[0], 10, 64)
		if err != nil || r.Kind != "+I" || r.Subtask != 0 || len(r.Fields) != 1 {
			t.Fatalf("tail row %+v, want +I of one number from subtask 0", r)
		}
		waitFor(t, "the sink to receive "+r.Fields[0], func() bool { return sink.received(n) })
	}
	code, body := c.call("GET", "/v1/jobs/"+id+"/vertices/"+strings.Repeat("a", 32)+"/tail", "", "")
	wantError(t, "unknown vertex", code, body, http.StatusNotFound, "has no vertex")
	code, body = c.call("GET", "/v1/jobs/"+id+"/vertices/"+d.Vertices[1].ID+"/tail?rate=5000", "", "")
	wantError(t, "rate=5000", code, body, http.StatusBadRequest, "at most 1000 rows a second")
	code, body = c.call("GET", "/v1/jobs/"+id+"/vertices/"+d.Vertices[1].ID+"/tail?limit=x", "", "")
	wantError(t, "limit=x", code, body, http.StatusBadRequest, `limit "x": want a positive number`)
}

// countJob counts rows per key: the sink receives the aggregation's
// updates as retractions (-U, +U).
const countJob = `
SET 'execution.checkpointing.interval' = '100 ms';
SET 'pipeline.name' = 'counts';
CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '200', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '1', 'fields.n.end' = '100000000');
CREATE TABLE out (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT MOD(n, 3), COUNT(*) FROM gen GROUP BY MOD(n, 3);`

// The tail of an aggregation's sink shows the RowKinds of its changelog:
// the first count of a key is +I, then each update -U and +U, each row a
// key 0..2 and a count ≥ 1.
func TestTailShowsRowKinds(t *testing.T) {
	c := newCluster(t)
	id := c.submit(countJob, nil)
	var d api.JobDetails
	waitFor(t, "the job to run", func() bool {
		get(t, c, "/v1/jobs/"+id, &d)
		return d.State == api.StateRunning
	})
	rows, _ := tailOf(t, c, id, d.Vertices[len(d.Vertices)-1].ID, 1000, 40)
	kinds := map[string]int{}
	for _, r := range rows {
		kinds[r.Kind]++
		k, err1 := strconv.Atoi(r.Fields[0])
		n, err2 := strconv.Atoi(r.Fields[1])
		if len(r.Fields) != 2 || err1 != nil || err2 != nil || k < 0 || k > 2 || n < 1 || !slices.Contains([]string{"+I", "-U", "+U"}, r.Kind) {
			t.Errorf("tail row %+v, want a key 0..2 and its count", r)
		}
	}
	if kinds["-U"] == 0 || kinds["+U"] == 0 {
		t.Errorf("tail of the counts: kinds %v, want -U and +U", kinds)
	}
}

// A tail without a limit ends when its job does, with a last stats event
// saying so and counting every row it sampled; the rows are the
// aggregation's changelog (an upsert sink's materializer turns an
// update's -U into -D).
func TestTailEndsWithTheJob(t *testing.T) {
	c := newCluster(t)
	id := c.submit(aggJob, nil)
	var d api.JobDetails
	get(t, c, "/v1/jobs/"+id, &d)
	rows, st := tailOf(t, c, id, d.Vertices[len(d.Vertices)-1].ID, 1000, 0)
	if st.Ended != "the job is FINISHED" || st.Sampled != int64(len(rows)) || st.Seen < st.Sampled {
		t.Errorf("the tail ended with %+v after %d rows; want it to end with the job, counting its rows", st, len(rows))
	}
	for _, r := range rows {
		if len(r.Fields) != 3 || !slices.Contains([]string{"+I", "-U", "+U", "-D"}, r.Kind) {
			t.Errorf("tail row %+v, want a change of (k, n, s)", r)
		}
	}
}
