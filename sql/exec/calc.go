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
}

// ProcessElement filters and projects one row.
func (c *Calc) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	if c.Filter != nil {
		ok, err := c.Filter(row.Fields)
		if err != nil {
			return fmt.Errorf("sql/exec: Calc filter: %w", err)
		}
		if !ok {
			c.Ctx.Metrics.Filtered++
			return nil
		}
	}
	fields := row.Fields
	if c.Project != nil {
		if fields, err = c.Project(row.Fields); err != nil {
			return fmt.Errorf("sql/exec: Calc projection: %w", err)
		}
	}
	emit(c.Ctx, row.Kind, fields, r.Timestamp)
	return nil
}
