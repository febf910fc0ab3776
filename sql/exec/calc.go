package exec

import (
	"fmt"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// Calc is a projection and filter on rows (Flink's Calc): a row that
// passes Filter is mapped by Project and keeps its RowKind and timestamp,
// so it works on any changelog. It is not keyed and keeps no state.
type Calc struct {
	operator.Base
	// Filter keeps the rows for which it returns true (WHERE, HAVING).
	// Default nil: every row.
	Filter func(fields []any) (bool, error)
	// Project computes the output fields (SELECT). Default nil: the input
	// fields.
	Project func(fields []any) ([]any, error)
	// ProjectInto, when set with Project, does what Project does but
	// writes the Width output fields into out, and never keeps fields or
	// returns a value sharing its memory. A fused Calc (FuseCalcs) then
	// projects a stage whose output only a later ProjectInto reads into
	// one buffer reused row after row, instead of a new slice per row.
	// Default nil.
	ProjectInto func(out, fields []any) error
	// Width is the number of fields ProjectInto writes.
	Width int
	// stages, when set (FuseCalcs), replace Filter and Project: each stage
	// filters and projects the previous stage's output.
	stages []*Calc
	// scratch, when set, is the buffer this stage projects into: the next
	// stage that projects reads it and copies what it keeps (ProjectInto).
	scratch []any
}

// FuseCalcs returns one Calc that does what each of calcs does, in order,
// as Flink merges adjacent Calcs: a row is handed over and boxed once
// instead of once per Calc.
//
// A stage's output that only the next projecting stage reads, when that
// stage copies it (ProjectInto), goes into a buffer of the returned Calc's
// own: call FuseCalcs once per operator instance.
func FuseCalcs(calcs ...*Calc) *Calc {
	var stages []*Calc
	for _, c := range calcs {
		for _, s := range c.flat() {
			stages = append(stages, &Calc{Filter: s.Filter, Project: s.Project, ProjectInto: s.ProjectInto, Width: s.Width})
		}
	}
	var next *Calc // the nearest later stage that projects
	for i := len(stages) - 1; i >= 0; i-- {
		s := stages[i]
		if s.Project == nil {
			continue
		}
		if s.ProjectInto != nil && next != nil && next.ProjectInto != nil {
			s.scratch = make([]any, s.Width)
		}
		next = s
	}
	return &Calc{stages: stages}
}

// flat returns c's stages, or c itself when it has none.
func (c *Calc) flat() []*Calc {
	if len(c.stages) > 0 {
		return c.stages
	}
	return []*Calc{c}
}

// apply filters and projects fields; keep is false for a filtered row.
func (c *Calc) apply(fields []any) (out []any, keep bool, err error) {
	if c.Filter != nil {
		ok, err := c.Filter(fields)
		if err != nil {
			return nil, false, fmt.Errorf("sql/exec: Calc filter: %w", err)
		}
		if !ok {
			return nil, false, nil
		}
	}
	switch {
	case c.scratch != nil:
		if err = c.ProjectInto(c.scratch, fields); err != nil {
			return nil, false, fmt.Errorf("sql/exec: Calc projection: %w", err)
		}
		fields = c.scratch
	case c.Project != nil:
		if fields, err = c.Project(fields); err != nil {
			return nil, false, fmt.Errorf("sql/exec: Calc projection: %w", err)
		}
	}
	return fields, true, nil
}

// ProcessElement filters and projects one row.
func (c *Calc) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	fields, keep := row.Fields, true
	if len(c.stages) == 0 {
		fields, keep, err = c.apply(fields)
	} else {
		for _, s := range c.stages {
			if fields, keep, err = s.apply(fields); err != nil || !keep {
				break
			}
		}
	}
	if err != nil {
		return err
	}
	if !keep {
		c.Ctx.Metrics.Filtered++
		return nil
	}
	if _, plain := r.Value.(event.Row); plain && sameSlice(fields, row.Fields) {
		c.Ctx.Output.Collect(r) // filtered only: the record as it came
		return nil
	}
	emit(c.Ctx, row.Kind, fields, r.Timestamp)
	return nil
}

// sameSlice reports whether a and b are one slice: a stage that only
// filters (or passes rows through) returns its input.
func sameSlice(a, b []any) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
