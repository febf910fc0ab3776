package planner

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// schemaOf plans sql and returns the state schema of its first Rel named
// op.
func schemaOf(t *testing.T, sql, op string) *graph.StateSchema {
	t.Helper()
	q, err := parser.ParseQuery(sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	r, err := (&Planner{}).Plan(q)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	for stack := []*Rel{r}; len(stack) > 0; {
		x := stack[len(stack)-1]
		stack = append(stack[:len(stack)-1], x.Inputs...)
		if x.Op == op {
			return stateSchema(x)
		}
	}
	t.Fatalf("%s: no %s in the plan", sql, op)
	return nil
}

// A group aggregation's state schema is its key types and accumulator
// functions and types (with the argument type of a DISTINCT call, whose
// values it keeps; Legacy is the types alone, as an older Weir recorded); renaming a column keeps its fingerprint, changing a type does
// not. Other keyed operators fall back to their input and output rows.
func TestStateSchemaFingerprint(t *testing.T) {
	agg := func(k, v, names string) *graph.StateSchema {
		return schemaOf(t, "SELECT "+names[:1]+", SUM("+names[1:]+"), COUNT(*) FROM (VALUES (CAST(1 AS "+k+"), CAST(2 AS "+v+
			"))) AS t("+names[:1]+", "+names[1:]+") GROUP BY "+names[:1], "GroupAggregate")
	}
	base := agg("INT", "BIGINT", "kv")
	if want := (graph.StateSchema{Operator: "GroupAggregate(groupBy=[k], select=[SUM(v), COUNT(*)])",
		Types: "GroupAggregate: key (INT), state (SUM BIGINT, COUNT(*) BIGINT), format (binary rows)",
		Text:  "key (k INT), state (SUM(v) BIGINT, COUNT(*) BIGINT), kept as binary rows",
		Legacy: []string{"GroupAggregate: key (INT), state (SUM BIGINT, COUNT(*) BIGINT)",
			"GroupAggregate: key (INT), state (BIGINT, BIGINT)"}}); !reflect.DeepEqual(*base, want) {
		t.Fatalf("got %+v\nwant %+v", *base, want)
	}
	if renamed := agg("INT", "BIGINT", "ab"); renamed.Types != base.Types || renamed.Text == base.Text {
		t.Errorf("renamed columns: %+v, want the fingerprint of %+v with other names", *renamed, *base)
	}
	for _, c := range [][2]string{{"STRING", "BIGINT"}, {"INT", "DOUBLE"}, {"BIGINT", "BIGINT"}} {
		if s := agg(c[0], c[1], "kv"); s.Types == base.Types {
			t.Errorf("k %s, v %s: same fingerprint as k INT, v BIGINT: %s", c[0], c[1], s.Types)
		}
	}

	distinct := func(v string) *graph.StateSchema {
		return schemaOf(t, "SELECT k, COUNT(DISTINCT v) FROM (VALUES (1, CAST(2 AS "+v+"))) AS t(k, v) GROUP BY k",
			"GroupAggregate")
	}
	// DISTINCT calls share maps (issue 16): no fingerprint from before
	// restores, as the older per-call maps cannot be read. Over a
	// retracting input the maps count; over an insert-only one they hold
	// presence bits and read the counts (the Legacy), not the other way.
	counts := schemaOf(t, "SELECT n, COUNT(DISTINCT k) FROM (SELECT k, COUNT(*) AS n FROM (VALUES (1)) AS t(k) GROUP BY k) GROUP BY n",
		"GroupAggregate")
	if want := "key (n BIGINT), state (COUNT(DISTINCT k) BIGINT of distinct INT), kept as binary rows, shared distinct maps"; counts.Text != want || counts.Legacy != nil {
		t.Errorf("COUNT(DISTINCT k) over updates: %s, legacy %q, want %s and no legacy", counts.Text, counts.Legacy, want)
	}
	bits := schemaOf(t, "SELECT n, COUNT(DISTINCT k) FROM (VALUES (CAST(1 AS BIGINT), 1)) AS t(n, k) GROUP BY n", "GroupAggregate")
	if want := "key (n BIGINT), state (COUNT(DISTINCT k) BIGINT of distinct INT), kept as binary rows, shared distinct maps of presence bits"; bits.Text != want ||
		!reflect.DeepEqual(bits.Legacy, []string{counts.Types}) {
		t.Errorf("COUNT(DISTINCT k) over inserts: %s, legacy %q, want %s and legacy %q", bits.Text, bits.Legacy, want, counts.Types)
	}
	if got := distinct("STRING"); !strings.HasSuffix(got.Text, "shared distinct maps of presence bits") || len(got.Legacy) != 1 {
		t.Errorf("COUNT(DISTINCT v) over VALUES: %s, legacy %q, want presence bits and the counts' fingerprint", got.Text, got.Legacy)
	}

	join := schemaOf(t, "SELECT * FROM (VALUES (1, 'a')) AS l(a, b) JOIN (VALUES (1, 2.5)) AS r(c, d) ON a = c", "Join")
	if want := "left input (a INT, b CHAR(1)), right input (c INT, d DECIMAL(2, 1)), output (a INT, b CHAR(1), c INT, d DECIMAL(2, 1)), kept as binary rows"; join.Text != want {
		t.Errorf("join: %s\nwant %s", join.Text, want)
	}
	if l := join.Legacy; len(l) != 1 || l[0]+", format (binary rows)" != join.Types {
		t.Errorf("join: legacy %q of %q, want the fingerprint before binary rows", l, join.Types)
	}
	// LISTAGG keeps a list: RowCodec values, the fingerprint of before.
	list := schemaOf(t, "SELECT k, LISTAGG(v) FROM (VALUES (1, 'a')) AS t(k, v) GROUP BY k", "GroupAggregate")
	if strings.Contains(list.Types, "binary") || len(list.Legacy) != 1 {
		t.Errorf("LISTAGG: %+v, want RowCodec values and the legacy fingerprint without functions", *list)
	}
}

// A Top-N over fields binary rows hold keeps them as binary rows: its
// fingerprint says so, so an older Weir refuses its checkpoints, and its
// Legacy is the fingerprint before, whose checkpoints it converts. Over an
// ARRAY it keeps RowCodec values, with the fingerprint of before.
func TestStateSchemaTopNBinaryRows(t *testing.T) {
	const topN = "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM (VALUES (1, %s)) AS t(k, v)) WHERE rn <= 3"
	got := schemaOf(t, fmt.Sprintf(topN, "CAST(2 AS BIGINT)"), "Rank")
	want := graph.StateSchema{Operator: "Rank(rankRange=[1..3], partitionBy=[k])",
		Types:  "Rank: input (INT, BIGINT), output (INT, BIGINT, BIGINT), format (binary rows)",
		Text:   "input (k INT, v BIGINT), output (k INT, v BIGINT, $rn BIGINT), kept as binary rows",
		Legacy: []string{"Rank: input (INT, BIGINT), output (INT, BIGINT, BIGINT)"}}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("got %+v\nwant %+v", *got, want)
	}
	arr := schemaOf(t, fmt.Sprintf(topN, "ARRAY[2]"), "Rank")
	if strings.Contains(arr.Types, "binary") || arr.Legacy != nil {
		t.Errorf("over an ARRAY: %+v, want RowCodec values and no Legacy", *arr)
	}
}

// A one-phase window aggregation over a pruned TVF input (prunedTVFInput)
// accepts the state schema it declared over the unpruned input, which a
// checkpoint taken before the pruning recorded; an operator keeping rows
// (a window rank) does not: rows of the old width are not its rows.
func TestStateSchemaAcceptsUnprunedInput(t *testing.T) {
	bigint := types.Type{Kind: types.BigInt}
	str := types.Type{Kind: types.Varchar}
	wide := &Rel{Op: "Calc", Cols: []expr.Column{{Name: "a", Type: bigint}, {Name: "s", Type: str}, {Name: "b", Type: bigint}}}
	narrow := &Rel{Op: "Calc", Cols: []expr.Column{{Name: "a", Type: bigint}, {Name: "b", Type: bigint}}, prunedFrom: wide}
	out := []expr.Column{{Name: "a", Type: bigint}, {Name: "n", Type: bigint}}
	for _, op := range []string{"WindowAggregate", "GroupWindowAggregate", "WindowRank"} {
		before := stateSchema(&Rel{Op: op, Inputs: []*Rel{wide}, Cols: out})
		now := stateSchema(&Rel{Op: op, Inputs: []*Rel{narrow}, Cols: out})
		accepts := slices.Contains(now.Legacy, before.Types)
		if now.Types == before.Types || accepts != (op != "WindowRank") {
			t.Errorf("%s: schema %s, legacy %v; before %s (accepted: %v)", op, now.Types, now.Legacy, before.Types, accepts)
		}
	}
}
