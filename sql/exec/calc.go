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
	// Width is the number of fields ProjectInto writes: Project's output
	// length. The two must agree: with ProjectInto set, the row a Calc
	// emits is Width fields that ProjectInto filled (event.NewRow), or,
	// with Prefix, the input row itself.
	Width int
	// Prefix reports that Project picks columns 0 to Width-1 as they are:
	// a row of exactly Width fields passes on as it came, without a copy
	// (a SELECT * after an operator, or a sink taking a query's columns:
	// Nexmark q19 copied each of its Top-N's ranked rows). A wider row is
	// projected.
	Prefix bool
	// Now lists the output fields that are the current instant (PROCTIME()
	// or CURRENT_TIMESTAMP as a column, expr.Compiled.IsCurrentTimestamp),
	// and NowValue gives an instant's value: the Calc fills those fields
	// from its subtask's processing time (operator.Context.Now: on the
	// real clock one reading serves up to 16 rows of a batch, see
	// operator.CachedNow; a caller's clock, runtime.Options.Now, is read
	// for each row) with one box per millisecond, where each row read the
	// wall clock and boxed a time of its own. Project and ProjectInto need
	// not compute them. Default nil.
	Now      []int
	NowValue func(ms int64) any
	// nowMs and nowBox are the last value of Now's fields, and its
	// millisecond.
	nowMs  int64
	nowBox any
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
			stages = append(stages, &Calc{Filter: s.Filter, Project: s.Project, ProjectInto: s.ProjectInto, Width: s.Width, Prefix: s.Prefix,
				Now: s.Now, NowValue: s.NowValue})
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
	// A stage reading an earlier one's scratch must copy what it keeps: the
	// buffer is written again by the next row.
	fromScratch := false
	for _, s := range stages {
		if s.Project == nil {
			continue
		}
		s.Prefix = s.Prefix && !fromScratch
		fromScratch = s.scratch != nil
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
// A projection into a row of its own (ProjectInto without scratch) comes
// back as row too: its fields and header are one allocation, which emit
// boxes with no other.
func (c *Calc) apply(fields []any, kind event.RowKind, ctx *operator.Context) (out []any, row *event.Row, keep bool, err error) {
	if c.Filter != nil {
		ok, err := c.Filter(fields)
		if err != nil {
			return nil, nil, false, fmt.Errorf("sql/exec: Calc filter: %w", err)
		}
		if !ok {
			return nil, nil, false, nil
		}
	}
	switch {
	case c.Prefix && len(fields) == c.Width: // the row is its projection
	case c.scratch != nil:
		if err = c.ProjectInto(c.scratch, fields); err != nil {
			return nil, nil, false, fmt.Errorf("sql/exec: Calc projection: %w", err)
		}
		fields = c.scratch
	case c.ProjectInto != nil && c.Project != nil:
		row = event.NewRow(kind, c.Width)
		if err = c.ProjectInto(row.Fields, fields); err != nil {
			return nil, nil, false, fmt.Errorf("sql/exec: Calc projection: %w", err)
		}
		fields = row.Fields
	case c.Project != nil:
		if fields, err = c.Project(fields); err != nil {
			return nil, nil, false, fmt.Errorf("sql/exec: Calc projection: %w", err)
		}
	default:
		return fields, row, true, nil
	}
	if len(c.Now) > 0 {
		c.fillNow(fields, ctx.Now())
	}
	return fields, row, true, nil
}

// fillNow sets the Now fields of a projected row to the instant ms.
func (c *Calc) fillNow(fields []any, ms int64) {
	if c.nowBox == nil || ms != c.nowMs {
		c.nowMs, c.nowBox = ms, c.NowValue(ms)
	}
	for _, i := range c.Now {
		fields[i] = c.nowBox
	}
}

// ProcessElement filters and projects one row.
func (c *Calc) ProcessElement(r event.Record) error {
	in, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	fields, keep := in.Fields, true
	var row *event.Row // the row the last projection made
	if len(c.stages) == 0 {
		fields, row, keep, err = c.apply(fields, in.Kind, c.Ctx)
	} else {
		for _, s := range c.stages {
			var made *event.Row
			if fields, made, keep, err = s.apply(fields, in.Kind, c.Ctx); err != nil || !keep {
				break
			}
			if made != nil || s.Project != nil {
				row = made
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
	if _, plain := r.Value.(event.Row); plain && sameSlice(fields, in.Fields) {
		c.Ctx.Output.Collect(r) // filtered only: the record as it came
		return nil
	}
	if row != nil && sameSlice(fields, row.Fields) {
		c.Ctx.Output.Collect(event.Record{Value: event.BoxRow(row), Timestamp: r.Timestamp})
		return nil
	}
	emit(c.Ctx, in.Kind, fields, r.Timestamp)
	return nil
}

// sameSlice reports whether a and b are one slice: a stage that only
// filters (or passes rows through) returns its input.
func sameSlice(a, b []any) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
