package planner

import (
	"errors"
	"fmt"

	"github.com/weirstream/weir/operator"
)

// ErrOperator marks a plan whose operator could not be made from the
// options the planner derived (an internal inconsistency or a query the
// planner's own checks let through).
var ErrOperator = errors.New("planner: cannot create operator")

// OperatorError names the operator whose constructor failed.
type OperatorError struct {
	Op  string
	Err error
}

// Error is "planner: cannot create operator OP: cause".
func (e *OperatorError) Error() string {
	return fmt.Sprintf("%v %s: %v", ErrOperator, e.Op, e.Err)
}

// Unwrap returns the constructor's error.
func (e *OperatorError) Unwrap() []error { return []error{ErrOperator, e.Err} }

// factory makes one operator instance, or says why it cannot.
type factory func() (operator.Operator, error)

// opOf adapts a constructor exec.NewX and its options into a factory.
// The explicit nil keeps a failed constructor's typed nil pointer (a
// (*exec.IntervalJoin)(nil)) out of the operator.Operator interface.
func opOf[O any, T operator.Operator](newOp func(O) (T, error), opts O) factory {
	return func() (operator.Operator, error) {
		op, err := newOp(opts)
		if err != nil {
			return nil, err
		}
		return op, nil
	}
}

// checked makes f's operator once, at planning, so that its constructor's
// error is a planning error, and returns the graph node's factory. Should a
// later call fail all the same, the subtask gets an operator whose Open
// reports the error: the graph's factories cannot return one.
func checked(name string, f factory) (func() operator.Operator, error) {
	if _, err := f(); err != nil {
		return nil, &OperatorError{Op: name, Err: err}
	}
	return func() operator.Operator {
		op, err := f()
		if err != nil {
			return operator.Failing(&OperatorError{Op: name, Err: err})
		}
		return op
	}, nil
}
