package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weirstream/weir/rest/api"
)

// The dashboard's "Explain analyze" tab of a finished aggregation shows
// what GET /explain-analyze reports — each vertex's rows in and out,
// state size and the plan text, exactly — and the hottest subtasks; its
// "Tail" panel, started on the sink of a running aggregation, shows the
// rows flowing with their RowKind and the stream's counts.
func TestDashboardAnalyzeAndTail(t *testing.T) {
	browser := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	jm := startJobManager(t, dir)
	agg := jm.submit(writeScript(t, dir, "agg.sql", `
SET 'parallelism.default' = '2';
SET 'pipeline.name' = 'agg';
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '3000', 'number-of-rows' = '3000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3000');
CREATE TABLE sums (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sums SELECT MOD(id, 10), COUNT(*) FROM gen GROUP BY MOD(id, 10);`))
	counts := jm.submit(writeScript(t, dir, "counts.sql", `
SET 'pipeline.name' = 'counts';
CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '200', 'fields.n.kind' = 'sequence',
  'fields.n.start' = '1', 'fields.n.end' = '100000000');
CREATE TABLE out (k BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT MOD(n, 3), COUNT(*) FROM gen GROUP BY MOD(n, 3);`))
	jm.waitState(agg, api.StateFinished)
	ea, err := jm.client().ExplainAnalyze(ctx, agg)
	if err != nil {
		t.Fatal(err)
	}

	d := openDashboard(t, ctx, browser, jm.url)
	d.show("/job/"+agg+"/analyze", "#ea-table-rows")
	type vertexRow struct{ ID, In, Out, State, Live string }
	var got []vertexRow
	eval(d, `[...document.querySelectorAll('#ea-table-rows tr.ea-vertex')].map(r => ({ID: r.dataset.vertex,
		In: r.children[2].dataset.value, Out: r.children[3].dataset.value, State: r.children[8].dataset.value,
		Live: r.children[9].dataset.value}))`, &got)
	var want []vertexRow
	for _, v := range ea.Vertices {
		want = append(want, vertexRow{v.ID, fmt.Sprint(v.ReadRecords), fmt.Sprint(v.WriteRecords), fmt.Sprint(v.StateSize),
			fmt.Sprint(v.LiveStateSize)})
	}
	if !slices.Equal(got, want) || want[0].Out != "3000" || want[1].Live == "0" {
		t.Errorf("explain analyze table %+v, REST %+v (the source wrote 3000 rows; the aggregation holds state)", got, want)
	}
	var plan string
	eval(d, `document.querySelector('#ea-plan-text').textContent`, &plan)
	if plan != ea.Plan {
		t.Errorf("plan text on the page:\n%s\nREST's:\n%s", plan, ea.Plan)
	}
	var hot, subtasks int
	eval(d, `document.querySelectorAll('#hot-table tbody tr').length`, &hot)
	for _, v := range ea.Vertices {
		subtasks += v.Parallelism
	}
	if hot != subtasks || subtasks < 4 {
		t.Errorf("hottest subtasks table has %d rows, want the job's %d subtasks", hot, subtasks)
	}
	d.screenshot("6-analyze")

	d.show("/job/"+counts+"/tail", "#tail-start")
	var rate string
	eval(d, `document.querySelector('#tail-rate').value = '100'`, &rate)
	d.run(chromedp.Click(chromedp.CSS("#tail-start")))
	type tailRow struct{ Kind, Row string }
	var rows []tailRow
	d.agree("tail rows", func() string {
		eval(d, `[...document.querySelectorAll('#tail-table tr.tail-row')].map(r => ({Kind: r.children[1].textContent, Row: r.children[2].textContent}))`, &rows)
		if len(rows) < 10 {
			return fmt.Sprintf("%d rows so far", len(rows))
		}
		return ""
	})
	row := regexp.MustCompile(`^[0-2], [1-9][0-9]*$`)
	for _, r := range rows {
		if !slices.Contains([]string{"+I", "-U", "+U"}, r.Kind) || !row.MatchString(r.Row) {
			t.Errorf("tail row %+v, want a key 0..2 and its count as +I, -U or +U", r)
		}
	}
	d.agree("tail counts", func() string { // a stats event comes every second
		var sampled int
		eval(d, `Number((document.querySelector('#tail-counts') || {dataset: {}}).dataset.sampled || 0)`, &sampled)
		if sampled == 0 {
			return "no sampled rows counted yet"
		}
		return ""
	})
	d.screenshot("7-tail")
	d.run(chromedp.Click(chromedp.CSS("#tail-stop")))
}

func writeScript(t *testing.T, dir, name, script string) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
