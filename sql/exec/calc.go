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
	// stages, when set (FuseCalcs), replace Filter and Project: each stage
	// filters and projects the previous stage's output.
	stages []*Calc
}

// FuseCalcs returns one Calc that does what each of calcs does, in order,
// as Flink merges adjacent Calcs: a row is handed over and boxed once
// instead of once per Calc.
func FuseCalcs(calcs ...*Calc) *Calc {
	var stages []*Calc
	for _, c := range calcs {
		if len(c.stages) > 0 {
			stages = append(stages, c.stages...)
		} else {
			stages = append(stages, &Calc{Filter: c.Filter, Project: c.Project})
		}
	}
	return &Calc{stages: stages}
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
	if c.Project != nil {
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
	emit(c.Ctx, row.Kind, fields, r.Timestamp)
	return nil
}
