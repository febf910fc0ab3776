package planner

import (
	"errors"
	"testing"
	"time"

	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/exec"
)

// TestCheckedFactory: a constructor's error is the builder's error (typed,
// naming the operator), never a nil operator inside the interface.
func TestCheckedFactory(t *testing.T) {
	bad := exec.IntervalJoinOptions{LeftKeys: []int{0}, RightKeys: []int{0}, LeftArity: 2, RightArity: 2,
		LeftTime: 1, RightTime: 1, Lower: time.Hour, Upper: 0}
	op, err := opOf(exec.NewIntervalJoin, bad)()
	if op != nil || !errors.Is(err, exec.ErrInvalidOptions) {
		t.Errorf("opOf(NewIntervalJoin, inverted bounds)() = %#v, %v; want a nil operator and ErrInvalidOptions", op, err)
	}
	f, err := checked("IntervalJoin", opOf(exec.NewIntervalJoin, bad))
	var oe *OperatorError
	if f != nil || !errors.As(err, &oe) || oe.Op != "IntervalJoin" || !errors.Is(err, ErrOperator) || !errors.Is(err, exec.ErrInvalidOptions) {
		t.Errorf("checked = %v; want an OperatorError for IntervalJoin wrapping ErrInvalidOptions", err)
	}
	good := bad
	good.Lower, good.Upper = -time.Hour, time.Hour
	f, err = checked("IntervalJoin", opOf(exec.NewIntervalJoin, good))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f().(*exec.IntervalJoin); !ok {
		t.Errorf("the node's factory made %T, want *exec.IntervalJoin", f())
	}
}

// TestFactoryFailingLaterFailsOpen: should a factory fail after planning, the subtask
// gets an operator that fails Open with the error.
func TestFactoryFailingLaterFailsOpen(t *testing.T) {
	calls := 0
	f, err := checked("Flaky", func() (op operator.Operator, err error) {
		if calls++; calls > 1 {
			return nil, errors.New("gone")
		}
		return &exec.Calc{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f().Open(nil); err == nil || err.Error() != "planner: cannot create operator Flaky: gone" {
		t.Errorf("Open of a factory that failed after planning: %v", err)
	}
}
