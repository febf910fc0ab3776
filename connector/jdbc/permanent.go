package jdbc

import "github.com/weirstream/weir/operator"

// permanentError marks a misconfiguration that fails the same way on every
// attempt (wrong password, missing table or column, a declared key the
// table lacks): errors.Is(err, operator.ErrNonRestartable), so the job
// fails once with the message instead of restarting forever.
type permanentError struct{ err error }

func permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Is makes errors.Is(err, operator.ErrNonRestartable) true.
func (e *permanentError) Is(target error) bool { return target == operator.ErrNonRestartable }
