package planner

import (
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
)

// Legacy group windows and the SESSION window TVF, planned onto the window
// operators Weir has: GROUP BY TUMBLE(ts, size) / HOP(ts, slide, size)
// is the window aggregation of the TUMBLE/HOP TVF over the same input
// (TUMBLE_START/_END/_ROWTIME read its window_start, window_end and
// window_time), and an aggregation over SESSION(TABLE t [PARTITION BY k],
// DESCRIPTOR(ts), gap) is the session aggregation of GROUP BY …,
// SESSION(ts, gap), its session bounds named window_start and
// window_end.

// legacyWindowKey finds TUMBLE(ts, size[, offset]) or HOP(ts, slide,
// size[, offset]) among the GROUP BY items and returns the other items.
func (p *Planner) legacyWindowKey(in *Rel, groupBy []parser.Expr) (*tvfInfo, []parser.Expr, error) {
	var win *tvfInfo
	var rest []parser.Expr
	for _, g := range groupBy {
		f, ok := g.(*parser.FuncCall)
		if !ok || (f.Name != "TUMBLE" && f.Name != "HOP") || f.Over != nil {
			rest = append(rest, g)
			continue
		}
		if win != nil {
			return nil, nil, errAt(f.Pos, "GROUP BY has more than one group window")
		}
		var err error
		if win, err = p.legacyWindow(in, f); err != nil {
			return nil, nil, err
		}
	}
	return win, rest, nil
}

// legacyWindow reads TUMBLE(ts, …) or HOP(ts, …) over in.
func (p *Planner) legacyWindow(in *Rel, f *parser.FuncCall) (*tvfInfo, error) {
	if len(f.Args) < 2 {
		return nil, errAt(f.Pos, "%s takes (time attribute, INTERVAL …)", f.Name)
	}
	ti := identIndex(in, f.Args[0])
	if ti < 0 {
		return nil, errAt(f.Args[0].Position(), "%s(%s, …): no such column", f.Name, parser.Format(f.Args[0]))
	}
	t := &tvfInfo{input: in, timeField: ti, call: parser.Format(f), procTime: in.Cols[ti].Type.TimeAttr == "proctime"}
	if ti != in.RowTime && !t.procTime {
		return nil, &Error{Pos: f.Pos, Msg: fmt.Sprintf("%s(%s, …): not a time attribute of the input", f.Name, parser.Format(f.Args[0])),
			Hint: "group by a rowtime (WATERMARK FOR … in the table) or a PROCTIME() column"}
	}
	t.zone = p.windowZoneOf(in.Cols[ti])
	args := &tvfArguments{named: map[string]time.Duration{}}
	for _, a := range f.Args[1:] {
		if _, isIv := a.(*parser.IntervalLit); !isIv {
			return nil, errAt(a.Position(), "%s takes INTERVAL literals after the time attribute", f.Name)
		}
		if err := args.add(f, "", a); err != nil {
			return nil, err
		}
	}
	var err error
	t.spec, err = windowSpec(f, args)
	return t, err
}

// legacyWindowResolver reads the auxiliary functions of a TUMBLE or HOP
// group window from the window aggregation's columns after nk keys.
func legacyWindowResolver(kind string, nk int, out *Rel, next func(parser.Expr) (*expr.Compiled, error)) func(parser.Expr) (*expr.Compiled, error) {
	cols := map[string]int{kind + "_START": nk, kind + "_END": nk + 1, kind + "_ROWTIME": nk + 2}
	return func(e parser.Expr) (*expr.Compiled, error) {
		if f, ok := e.(*parser.FuncCall); ok {
			if i, ok := cols[f.Name]; ok {
				return fieldRef(i, out.Cols[i].Type), nil
			}
			if f.Name == kind+"_PROCTIME" {
				return nil, errAt(f.Pos, "%s is not supported; use %s_ROWTIME over an event-time window", f.Name, kind)
			}
		}
		return next(e)
	}
}

// sessionTVFKey turns an aggregation over the SESSION window TVF into a
// session aggregation: its partition keys must be grouped by (the
// sessions are the group's, as in Flink's session window aggregate).
func sessionTVFKey(t *tvfInfo, groupBy []parser.Expr) (*sessionInfo, error) {
	for _, k := range t.partitionBy {
		if !slices.ContainsFunc(groupBy, func(g parser.Expr) bool { return parser.Format(g) == parser.Format(k) }) {
			return nil, &Error{Pos: k.Position(), Msg: fmt.Sprintf("SESSION … PARTITION BY %s: the aggregation over the session windows must group by %s", parser.Format(k), parser.Format(k)),
				Hint: "add it to GROUP BY window_start, window_end, …"}
		}
	}
	if t.procTime {
		return nil, errAt(t.pos, "a SESSION window over a processing-time attribute is not supported; use an event-time attribute")
	}
	return &sessionInfo{timeField: t.timeField, gap: t.spec.Size, call: t.call, pos: t.pos}, nil
}

// sessionTVFCols names a session aggregation's window columns as the
// SESSION TVF's: window_start, window_end, window_time.
func sessionTVFCols(out *Rel, nk int, zone *time.Location) {
	out.Cols = slices.Clone(out.Cols)
	for i, n := range []string{"window_start", "window_end", "window_time"} {
		out.Cols[nk+i].Name = n
	}
	out.win = &windowCols{start: nk, end: nk + 1, zone: zone}
}
