package session

import (
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/sql/planner"
	"github.com/weirstream/weir/task"
	"github.com/weirstream/weir/types"
)

// Collect plans query q as a job named name whose result rows, with their
// RowKinds, go to sink — the SQL client's SELECT — and returns its graph,
// runtime options and the result's columns. The job takes no checkpoints
// and does not restart: a SELECT's result is shown once, and a failure is
// the user's to see.
func (s *Session) Collect(q *parser.Query, name string, sink operator.Sink) (*graph.JobGraph, runtime.Options, []types.Field, error) {
	p, err := s.planner()
	if err != nil {
		return nil, runtime.Options{}, nil, err
	}
	r, err := p.PlanCollect(q, sink)
	if err != nil {
		return nil, runtime.Options{}, nil, err
	}
	cols := make([]types.Field, len(r.Cols))
	for i, c := range r.Cols {
		cols[i] = types.Field{Name: c.Name, Type: c.Type}
	}
	sg, err := p.Build(name, []*planner.Rel{r})
	if err != nil {
		return nil, runtime.Options{}, nil, err
	}
	jg, err := sg.JobGraph()
	if err != nil {
		return nil, runtime.Options{}, nil, err
	}
	opts, err := s.Settings.RuntimeOptions(name)
	if err != nil {
		return nil, runtime.Options{}, nil, err
	}
	opts.Checkpoint.Interval, opts.CheckpointDir, opts.Restore = 0, "", ""
	opts.Mode, opts.Restart = task.AtMostOnce, runtime.NoRestart{}
	return jg, opts, cols, nil
}

// Statement runs one parsed statement, as Execute runs each of a
// script's: an INSERT is collected (see Inserts), a bare SELECT refused.
// The SQL client runs SELECTs itself (Collect) and the rest through here.
func (s *Session) Statement(st parser.Statement) error { return s.statement(st) }

// ClearInserts forgets the INSERTs collected so far: the SQL client
// submits each INSERT (or statement set) as a job of its own.
func (s *Session) ClearInserts() { s.inserts = nil }
