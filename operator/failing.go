package operator

// Failing returns an operator whose Open fails with err. A graph node's
// factory cannot return an error; when it cannot make its operator it
// returns this one, so the subtask fails with err instead of running a
// nil operator.
func Failing(err error) Operator { return &failing{err: err} }

type failing struct {
	Base
	err error
}

func (f *failing) Open(*Context) error { return f.err }
