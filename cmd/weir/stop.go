package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// exitError ends the process with Code; its message, if any, has been
// printed already.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitCode is the process's exit status for what a command returned: 0,
// an exitError's code, or 1 for any other error (printed).
func exitCode(err error) int {
	var e *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &e):
		return e.code
	default:
		fmt.Fprintln(os.Stderr, "weir:", err)
		return 1
	}
}

// stopSignal cancels a job's context at the first SIGINT or SIGTERM and
// remembers which it was, so the process can exit with 128 + its number
// (130, 143) as shells expect from a program a signal stopped. After the
// first, the signals get their default action again: a second Ctrl-C
// kills a job whose shutdown hangs.
type stopSignal struct {
	mu  sync.Mutex
	got os.Signal
}

// onTerm, if set, replaces the cancellation on SIGTERM (weir run
// --savepoint-on-stop: stop with a savepoint, which ends the job; it
// cancels by itself when the savepoint fails).
func notifyStop(parent context.Context, onTerm func(cancel context.CancelFunc)) (context.Context, *stopSignal, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	s := &stopSignal{}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer signal.Stop(ch)
		select {
		case sig := <-ch:
			s.mu.Lock()
			s.got = sig
			s.mu.Unlock()
			if sig == syscall.SIGTERM && onTerm != nil {
				onTerm(cancel)
				return
			}
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, s, cancel
}

// signal returns the signal that stopped the job, or nil.
func (s *stopSignal) signal() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}

// stoppedBy is the exitError of a job stopped by sig: 128 + the signal number.
func stoppedBy(sig os.Signal) *exitError {
	n, ok := sig.(syscall.Signal)
	if !ok {
		return &exitError{code: 1}
	}
	return &exitError{code: 128 + int(n)}
}

// signalName is the signal's name as shells and kill(1) spell it.
func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}
