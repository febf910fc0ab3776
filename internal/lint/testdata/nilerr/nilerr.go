// Package nilerr holds the shapes the error checks must flag (a "want"
// comment names the check) and the fixed shapes they must pass.
package nilerr

import "errors"

type Writer interface{ Close() error }

type txnWriter struct{}

func (*txnWriter) Close() error { return nil }

func newTxnWriter(ok bool) (*txnWriter, error) {
	if !ok {
		return nil, errors.New("no broker")
	}
	return &txnWriter{}, nil
}

// The Kafka sink's CreateWriter before the fix.
func CreateWriter(ok bool) (Writer, error) {
	return newTxnWriter(ok) // want typed-nil-interface
}

func CreateWriterVars(ok bool) (Writer, error) {
	w, err := newTxnWriter(ok)
	return w, err // want typed-nil-interface
}

func CreateWriterFixed(ok bool) (Writer, error) {
	w, err := newTxnWriter(ok)
	if err != nil {
		return nil, err
	}
	return w, nil
}

func CreateWriterLiteral(err error) (Writer, error) {
	return &txnWriter{}, err
}

// The planner's factories before the fix.
func Factory() func() Writer {
	return func() Writer {
		w, _ := newTxnWriter(false) // want discarded-constructor-error
		return w
	}
}

type lookup struct{}

func NewLookup() (*lookup, bool) { return &lookup{}, true }

func NotAnError() *lookup {
	l, _ := NewLookup()
	return l
}

func Inner() (Writer, error) {
	f := func() (*txnWriter, error) { return newTxnWriter(true) }
	w, err := f()
	if err != nil {
		return nil, err
	}
	return w, nil
}
