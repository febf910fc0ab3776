package planner

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// windowKeys are a join's equi keys with the window columns' pairs taken
// out: what a window join is keyed by.
type windowKeys struct {
	lkeys, rkeys []int
	nullSafe     []bool
}

// windowJoinKeys reports whether a join of l and r on the key pairs
// lkeys = rkeys is a window join as Flink plans one: both sides are
// insert-only and carry the window columns of one window TVF (TUMBLE,
// HOP or CUMULATE, read directly or through a window aggregation or
// rank, in one zone), and the keys pair window_start with window_start
// and window_end with window_end. Then it returns the other keys. A join
// with only one of the two pairs, or of differently windowed sides,
// stays a regular join, as in Flink (since 1.16 it falls back instead of
// failing).
func windowJoinKeys(l, r *Rel, lkeys, rkeys []int, nullSafe []bool) (*windowKeys, bool) {
	lw, rw := l.win, r.win
	if lw == nil || rw == nil || lw.spec == nil || rw.spec == nil || !l.InsertOnly || !r.InsertOnly {
		return nil, false
	}
	if *lw.spec != *rw.spec || lw.zone.String() != rw.zone.String() {
		return nil, false
	}
	var out windowKeys
	var start, end bool
	for i := range lkeys {
		switch {
		case lkeys[i] == lw.start && rkeys[i] == rw.start:
			start = true
		case lkeys[i] == lw.end && rkeys[i] == rw.end:
			end = true
		default:
			out.lkeys, out.rkeys = append(out.lkeys, lkeys[i]), append(out.rkeys, rkeys[i])
			if nullSafe != nil {
				out.nullSafe = append(out.nullSafe, nullSafe[i])
			}
		}
	}
	return &out, start && end
}

// windowRowsOf says where a window join finds a side's windows.
func windowRowsOf(w *windowCols) exec.WindowRows {
	return exec.WindowRows{Start: w.start, End: w.end, Zone: w.zone}
}

// windowJoin plans exec.WindowJoin for l JOIN r (their rows as the join
// reads them, computed keys appended).
func (p *Planner) windowJoin(j *parser.Join, on parser.Expr, l, r *Rel, wk *windowKeys, cols []expr.Column, cond func(l, r []any) (bool, error)) (*Rel, error) {
	opts := exec.WindowJoinOptions{Type: joinTypes[j.Kind], LeftWindow: windowRowsOf(l.win), RightWindow: windowRowsOf(r.win),
		LeftKeys: wk.lkeys, RightKeys: wk.rkeys, NullSafe: wk.nullSafe, LeftArity: len(l.Cols), RightArity: len(r.Cols), Condition: cond}
	if _, err := exec.NewWindowJoin(opts); err != nil {
		return nil, errAt(j.Pos, "window join: %v", err)
	}
	out := &Rel{Op: "WindowJoin", Detail: fmt.Sprintf("leftWindow=[%s], rightWindow=[%s], joinType=[%s], where=[%s]",
		joinWindowText(l), joinWindowText(r), joinTypeName(j.Kind), parser.Format(on)),
		Inputs: []*Rel{l, r}, Cols: cols, RowTime: -1, InsertOnly: true}
	lk, rk := opts.LeftKey().Of(), opts.RightKey().Of()
	out.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.keyedTwoInput("WindowJoin", opOf(exec.NewWindowJoin, opts), lk, rk, ins)
	}
	return out, nil
}

// windowText prints a side's window for EXPLAIN: the TVF and its window
// columns.
func joinWindowText(in *Rel) string {
	s := in.win.spec
	args := fmt.Sprintf("size=[%s]", durationText(s.Size))
	switch s.Kind {
	case exec.Hop:
		args += fmt.Sprintf(", slide=[%s]", durationText(s.Slide))
	case exec.Cumulate:
		args = fmt.Sprintf("max_size=[%s], step=[%s]", durationText(s.Size), durationText(s.Step))
	}
	if s.Offset != 0 {
		args += fmt.Sprintf(", offset=[%s]", durationText(s.Offset))
	}
	return fmt.Sprintf("%s(win_start=[%s], win_end=[%s], %s)", s.Kind, in.Cols[in.win.start].Name, in.Cols[in.win.end].Name, args)
}

// joinedWindow is where the window columns of a window join's output
// (l's columns, then r's) are: the left side's for INNER and LEFT joins,
// the right side's for RIGHT joins; none for FULL joins, whose padded
// rows have NULL on either side.
func joinedWindow(k parser.JoinKind, l, r *Rel) *windowCols {
	switch joinTypes[k] {
	case exec.InnerJoin, exec.LeftJoin:
		return l.win
	case exec.RightJoin:
		w := *r.win
		w.start, w.end = w.start+len(l.Cols), w.end+len(l.Cols)
		return &w
	}
	return nil
}

// windowSemiJoin plans a semi or anti join correlated on both window
// columns of identically windowed sides as a window semi/anti join
// (Flink's WindowJoin of type SEMI or ANTI): insert-only, each left row
// emitted or not when its window closes. Nil when it is not one.
func (p *Planner) windowSemiJoin(left, right *Rel, width int, opts exec.SemiJoinOptions, detail string) *Rel {
	if opts.Mode == exec.Scalar {
		return nil
	}
	wk, ok := windowJoinKeys(left, right, opts.LeftKeys, opts.RightKeys, nil)
	if !ok {
		return nil
	}
	wo := exec.WindowJoinOptions{Semi: opts.Mode == exec.Semi, Anti: opts.Mode == exec.Anti,
		LeftWindow: windowRowsOf(left.win), RightWindow: windowRowsOf(right.win), LeftKeys: wk.lkeys, RightKeys: wk.rkeys,
		LeftArity: len(left.Cols), RightArity: len(right.Cols), LeftWidth: width, Condition: opts.Condition}
	if _, err := exec.NewWindowJoin(wo); err != nil {
		return nil
	}
	out := &Rel{Op: "WindowJoin", Detail: fmt.Sprintf("leftWindow=[%s], rightWindow=[%s], joinType=[%s], %s",
		joinWindowText(left), joinWindowText(right), opts.Mode, detail),
		Inputs: []*Rel{left, right}, Cols: left.Cols[:width:width], RowTime: -1, InsertOnly: true, win: left.win}
	lk, rk := wo.LeftKey().Of(), wo.RightKey().Of()
	out.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.keyedTwoInput("WindowJoin", opOf(exec.NewWindowJoin, wo), lk, rk, ins)
	}
	return out
}

// durationText prints d in its largest whole unit, as Flink's plans do
// ("5 min", "10 s", "1500 ms").
func durationText(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "min"}, {time.Second, "s"}} {
		if d%u.d == 0 {
			return fmt.Sprintf("%d %s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}
