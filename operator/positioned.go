package operator

// PositionedError is an error at a place in a job's input or output that a
// restart reaches again: a source split and offset, a file line, a sink
// record or topic, the checkpoint directory. Position names the place in
// the user's terms ("topic orders partition 2 offset 1041", "file in.csv
// line 7"); the message says what to change to get past it (an option that
// skips such records, a setting to raise).
//
// When the same error recurs at the same position after a restart, the
// runtime fails the job once, with the position and this error, instead of
// restarting it again (runtime.RecurringFailureError): a restart resumes
// from the last checkpoint and would only fail there again. Implement it
// only where the failure is a property of the data or the configuration,
// never for a transient fault (a broker or database that is unreachable).
// A package that must not import operator implements the method alone;
// the runtime matches the interface with errors.As.
type PositionedError interface {
	error
	Position() string
}
