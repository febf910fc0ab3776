package planner

import (
	"time"

	"fmt"
	"strings"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/types"
)

// windowCols are the window_start and window_end columns of a Rel that
// come unchanged from an event-time window TVF or window aggregation.
type windowCols struct {
	start, end int
	// zone is the session zone whose wall clock the window columns hold
	// (windows over a TIMESTAMP_LTZ attribute outside UTC); nil: UTC.
	zone *time.Location
	// spec is the window TVF (TUMBLE, HOP, CUMULATE) the columns come
	// from, so that two sides windowed alike plan a window join; nil for
	// other windows (a legacy GROUP BY TUMBLE's, a SESSION TVF's).
	spec *exec.WindowSpec
}

// through maps w through a projection whose output column i copies input
// column from[i] (-1: computed); nil unless both columns pass.
func (w *windowCols) through(from []int) *windowCols {
	if w == nil {
		return nil
	}
	out := windowCols{start: -1, end: -1, zone: w.zone, spec: w.spec}
	for i, j := range from {
		if j == w.start && out.start < 0 {
			out.start = i
		}
		if j == w.end && out.end < 0 {
			out.end = i
		}
	}
	if out.start < 0 || out.end < 0 {
		return nil
	}
	return &out
}

// windowRankInput is where a window rank reads its rows and their windows.
type windowRankInput struct {
	in    *Rel // the Rel the ROW_NUMBER ranks (keys, order fields index it)
	input *Rel // the operator's input: in, or the TVF's input
	rows  exec.WindowRows
	keys  []int  // partition keys without window_start and window_end
	desc  string // the window, for EXPLAIN
}

// windowRankOf reports whether a ROW_NUMBER partitioned by keys over in
// is a window rank (Flink's Window Top-N and Window Deduplication): the
// partition holds window_start and window_end of an event-time window TVF
// or window aggregation, and in is insert-only. Nil otherwise: a regular
// rank.
func windowRankOf(in *Rel, keys []int) *windowRankInput {
	w := in.win
	if w == nil || !in.InsertOnly {
		return nil
	}
	wi := &windowRankInput{in: in, input: in, rows: exec.WindowRows{Start: w.start, End: w.end, Zone: w.zone},
		desc: in.Cols[w.start].Name + ", " + in.Cols[w.end].Name}
	var hasStart, hasEnd bool
	for _, k := range keys {
		switch k {
		case w.start:
			hasStart = true
		case w.end:
			hasEnd = true
		default:
			wi.keys = append(wi.keys, k)
		}
	}
	if !hasStart || !hasEnd {
		return nil
	}
	if t := in.tvf; t != nil {
		// Directly over the TVF the operator assigns the windows itself
		// (so HOP and CUMULATE work too), as Flink merges the TVF into its
		// WindowRank. Its keys must then be columns of the TVF's input.
		for _, k := range wi.keys {
			if k >= len(t.input.Cols) {
				return nil
			}
		}
		spec := t.spec
		wi.input, wi.rows, wi.desc = t.input, exec.WindowRows{Assign: &spec, TimeField: t.timeField, Zone: t.zone}, t.call
	}
	return wi
}

// windowRank plans a window rank when the pattern is one (see
// windowRankOf); nil otherwise.
func (p *Planner) windowRank(in *Rel, keys []int, rp *rankPattern) (*Rel, error) {
	wi := windowRankOf(in, keys)
	if wi == nil {
		return nil, nil
	}
	order, err := sortKeys(in, rp.over, "Window Top-N")
	if err != nil {
		return nil, err
	}
	if t := in.Cols[order[0].Field].Type.TimeAttr; rp.start == 1 && rp.n == 1 && len(order) == 1 && t != "" {
		if t == "proctime" {
			// Flink has no processing-time window deduplication either;
			// the regular deduplication takes it.
			return nil, nil
		}
		return p.windowDedup(wi, order[0])
	}
	return p.windowTopN(wi, order, rp)
}

func (p *Planner) windowDedup(wi *windowRankInput, order exec.SortKey) (*Rel, error) {
	in := wi.in
	opts := exec.WindowDedupOptions{Window: wi.rows, PartitionKeys: wi.keys, TimeField: order.Field, KeepLast: order.Desc}
	if _, err := exec.NewWindowDeduplicate(opts); err != nil {
		return nil, err
	}
	cols := append(append([]expr.Column(nil), in.Cols...), expr.Column{Name: "$rn", Type: types.Type{Kind: types.BigInt}})
	which := "first"
	if order.Desc {
		which = "last"
	}
	r := &Rel{Op: "WindowDeduplicate", Detail: fmt.Sprintf("window=[%s], keep=[%s], partitionBy=[%s], order=[%s]",
		wi.desc, which, keyNames(in, wi.keys), in.Cols[order.Field].Name),
		Inputs: []*Rel{wi.input}, Cols: cols, InsertOnly: true, RowTime: in.RowTime, win: in.win}
	key := exec.FieldKeyOf(wi.keys...)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		n, err := b.checkedKeyed("WindowDeduplicate", ins[0], key, opOf(exec.NewWindowDeduplicate, opts))
		if err != nil {
			return nil, err
		}
		return b.withRowNumber(n, in.Cols), nil
	}
	return r, nil
}

func (p *Planner) windowTopN(wi *windowRankInput, order []exec.SortKey, rp *rankPattern) (*Rel, error) {
	in := wi.in
	opts := exec.WindowRankOptions{Window: wi.rows, PartitionKeys: wi.keys, OrderBy: order,
		RankStart: rp.start, RankEnd: rp.n, RankNumber: rp.rnUsed}
	if _, err := exec.NewWindowRank(opts); err != nil {
		return nil, err
	}
	cols := append([]expr.Column(nil), in.Cols...)
	if rp.rnUsed {
		cols = append(cols, expr.Column{Name: "$rn", Type: types.Type{Kind: types.BigInt}})
	}
	orderText := make([]string, len(order))
	for i, o := range order {
		orderText[i] = in.Cols[o.Field].Name
		if o.Desc {
			orderText[i] += " DESC"
		}
	}
	r := &Rel{Op: "WindowRank", Detail: fmt.Sprintf("window=[%s], rankRange=[%d..%d], partitionBy=[%s], orderBy=[%s]",
		wi.desc, rp.start, rp.n, keyNames(in, wi.keys), strings.Join(orderText, ", ")),
		Inputs: []*Rel{wi.input}, Cols: cols, InsertOnly: true, RowTime: in.RowTime, win: in.win}
	key := exec.FieldKeyOf(wi.keys...)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.checkedKeyed("WindowRank", ins[0], key, opOf(exec.NewWindowRank, opts))
	}
	return r, nil
}
