package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weirstream/weir/rest/api"
)

// weir explain-analyze, hot-subtasks and tail against a JobManager
// running an aggregation: the plan text is the REST API's, the hottest
// subtasks one row each, and the tail of the sink (named by a part of its
// name) prints the aggregation's changelog as the print connector does.
func TestExplainAnalyzeHotAndTailCLI(t *testing.T) {
	dir := t.TempDir()
	p := startJobManager(t, dir)
	script := filepath.Join(dir, "counts.sql")
	err := os.WriteFile(script, []byte(`
SET 'pipeline.name' = 'counts';
CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '200', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '1', 'fields.n.end' = '100000000');
CREATE TABLE out (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT MOD(n, 3), COUNT(*) FROM gen GROUP BY MOD(n, 3);`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	id := p.submit(script)
	p.waitState(id, api.StateRunning)

	rows := p.weir("tail", id, "sink: out", "--rate", "1000", "--limit", "12")
	row := regexp.MustCompile(`^0> (\+I|-U|\+U)\[[0-2], [1-9][0-9]*\]$`)
	lines := strings.Split(strings.TrimSuffix(rows, "\n"), "\n")
	for _, l := range lines {
		if !row.MatchString(l) {
			t.Errorf("weir tail printed %q, want rows such as 0> +U[1, 7]", l)
		}
	}
	if len(lines) != 12 {
		t.Errorf("weir tail --limit 12 printed %d rows:\n%s", len(lines), rows)
	}

	plan := p.weir("explain-analyze", id)
	ea, err := p.client().ExplainAnalyze(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(plan, `== Job "counts" (RUNNING): `) {
		t.Errorf("weir explain-analyze printed\n%s", plan)
	}
	for _, v := range ea.Vertices {
		if !strings.Contains(plan, v.Name+" (parallelism 1)\n") {
			t.Errorf("weir explain-analyze lacks vertex %s:\n%s", v.Name, plan)
		}
	}
	explain := filepath.Join(dir, "explain.sql")
	if err := os.WriteFile(explain, []byte("EXPLAIN ANALYZE '"+id+"';\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := p.weir("sql", "-f", explain); !strings.Contains(out, `== Job "counts" (RUNNING): `) || !strings.Contains(out, "rows out ") {
		t.Errorf("weir sql's EXPLAIN ANALYZE printed\n%s", out)
	}
	hot := strings.Split(strings.TrimSpace(p.weir("hot-subtasks", id, "--by", "backpressure", "-n", "2")), "\n")
	if len(hot) != 3 || !strings.HasPrefix(hot[0], "VERTEX") {
		t.Errorf("weir hot-subtasks -n 2 printed %q, want a header and 2 rows", hot)
	}
	p.weir("cancel", id)
}
