package planner

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// sessionInfo is a legacy group window GROUP BY …, SESSION(ts, gap).
type sessionInfo struct {
	timeField int
	gap       time.Duration
	call      string
	pos       parser.Pos
}

// sessionKey finds SESSION(rowtime, INTERVAL …) among the GROUP BY items
// and returns the other items.
func sessionKey(in *Rel, groupBy []parser.Expr) (*sessionInfo, []parser.Expr, error) {
	var sess *sessionInfo
	var rest []parser.Expr
	for _, g := range groupBy {
		f, ok := g.(*parser.FuncCall)
		if !ok || f.Name != "SESSION" || f.Over != nil {
			rest = append(rest, g)
			continue
		}
		if sess != nil {
			return nil, nil, errAt(f.Pos, "GROUP BY has more than one SESSION window")
		}
		var err error
		if sess, err = sessionOf(in, f); err != nil {
			return nil, nil, err
		}
	}
	return sess, rest, nil
}

func sessionOf(in *Rel, f *parser.FuncCall) (*sessionInfo, error) {
	if len(f.Args) != 2 {
		return nil, errAt(f.Pos, "SESSION takes (time attribute, INTERVAL gap)")
	}
	ti := identIndex(in, f.Args[0])
	if ti < 0 || ti != in.RowTime {
		return nil, &Error{Pos: f.Pos, Msg: fmt.Sprintf("SESSION(%s, …): not the input's event-time attribute", parser.Format(f.Args[0])),
			Hint: "declare it with WATERMARK FOR … in the table (processing-time sessions are not supported)"}
	}
	iv, ok := f.Args[1].(*parser.IntervalLit)
	if !ok {
		return nil, errAt(f.Pos, "SESSION's gap must be an INTERVAL literal")
	}
	ms, _, err := expr.IntervalValue(iv)
	if err != nil {
		return nil, err
	}
	return &sessionInfo{timeField: ti, gap: time.Duration(ms) * time.Millisecond, call: parser.Format(f), pos: f.Pos}, nil
}

// sessionAgg is exec.SessionAggregate. Its output row is [keys…,
// session start, session end, rowtime, aggs…], like a window aggregate's.
func (p *Planner) sessionAgg(in *Rel, s *sessionInfo, ap *aggPlan) (*Rel, error) {
	zone := p.windowZoneOf(in.Cols[s.timeField])
	opts := exec.SessionAggOptions{Gap: s.gap, TimeField: s.timeField, GroupKeys: ap.keys, Aggs: ap.calls, Zone: zone}
	if _, err := exec.NewSessionAggregate(opts); err != nil {
		return nil, err
	}
	rowtime := types.Type{Kind: types.Timestamp, Precision: 3, TimeAttr: "rowtime"}
	if zone != nil {
		rowtime.Kind = types.TimestampLTZ // an instant; the bounds are the zone's wall clock
	}
	wcols := []expr.Column{{Name: "$session_start", Type: windowColType}, {Name: "$session_end", Type: windowColType},
		{Name: "$session_rowtime", Type: rowtime}}
	cols := p.aggOutputCols(in, ap, wcols)
	r := &Rel{Op: "GroupWindowAggregate", Detail: fmt.Sprintf("window=[%s], select=[%s]", s.call, aggText(ap.calls, in.Cols)),
		Inputs: []*Rel{in}, Cols: cols, InsertOnly: true, RowTime: len(ap.keys) + 2}
	key := exec.FieldKeyOf(ap.keys...)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.checkedKeyed("GroupWindowAggregate", ins[0], key, opOf(exec.NewSessionAggregate, opts))
	}
	return r, nil
}

// sessionResolver reads SESSION_START, SESSION_END and SESSION_ROWTIME
// from the session aggregate's window columns (after nk keys).
func sessionResolver(nk int, out *Rel, next func(parser.Expr) (*expr.Compiled, error)) func(parser.Expr) (*expr.Compiled, error) {
	cols := map[string]int{"SESSION_START": nk, "SESSION_END": nk + 1, "SESSION_ROWTIME": nk + 2}
	return func(e parser.Expr) (*expr.Compiled, error) {
		if f, ok := e.(*parser.FuncCall); ok {
			if i, ok := cols[f.Name]; ok {
				return fieldRef(i, out.Cols[i].Type), nil
			}
		}
		return next(e)
	}
}
