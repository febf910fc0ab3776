// Package cdctest holds what the CDC sources' tests share: a reader
// output that keeps rows, polling until a condition, and the check that a
// changelog applied row by row ends equal to the source table.
package cdctest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// Collector is a ReaderOutput that keeps the rows.
type Collector struct{ Rows []event.Row }

// Collect keeps r's row.
func (c *Collector) Collect(_ string, r event.Record) { c.Rows = append(c.Rows, r.Value.(event.Row)) }

// PollUntil polls r into c until stop says so, failing after a minute.
func PollUntil(t *testing.T, r operator.SourceReader, c *Collector, stop func() bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	for !stop() {
		st, err := r.Poll(c)
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if st == operator.NothingAvailable {
			select {
			case <-r.Available():
			case <-time.After(100 * time.Millisecond):
			case <-deadline:
				t.Fatalf("no end after a minute: %d rows read", len(c.Rows))
			}
		}
	}
}

// Materialize applies a changelog of rows keyed by their first field (an
// int64) and lists what does not fit: an insert of a present key, a
// retraction of an absent or different row.
func Materialize(rows []event.Row) (map[int64][]any, []string) {
	out := map[int64][]any{}
	var bad []string
	for _, r := range rows {
		id := r.Fields[0].(int64)
		switch r.Kind {
		case event.Insert, event.UpdateAfter:
			if _, ok := out[id]; ok {
				bad = append(bad, fmt.Sprintf("%s of present id %d", r.Kind, id))
			}
			out[id] = r.Fields
		default:
			if have, ok := out[id]; !ok || fmt.Sprint(have) != fmt.Sprint(r.Fields) {
				bad = append(bad, fmt.Sprintf("%s %v of a row that is %v", r.Kind, r.Fields, have))
			}
			delete(out, id)
		}
	}
	return out, bad
}

// CompareTables reports the differences between the materialized
// changelog and the table, and the rows that did not fit.
func CompareTables(t *testing.T, got, want map[int64][]any, bad []string) {
	t.Helper()
	if len(bad) > 0 {
		t.Errorf("%d changelog rows do not fit (duplicates or lost rows), first: %s", len(bad), strings.Join(bad[:min(5, len(bad))], "; "))
	}
	var diff []string
	for id, w := range want {
		if g, ok := got[id]; !ok || fmt.Sprint(g) != fmt.Sprint(w) {
			diff = append(diff, fmt.Sprintf("id %d: got %v, table has %v", id, g, w))
		}
	}
	for id, g := range got {
		if _, ok := want[id]; !ok {
			diff = append(diff, fmt.Sprintf("id %d: got %v, not in the table", id, g))
		}
	}
	if len(diff) > 0 {
		t.Fatalf("changelog differs from the table in %d rows (of %d), first: %s", len(diff), len(want), strings.Join(diff[:min(5, len(diff))], "; "))
	}
}
