package pebble

import (
	"fmt"
	"sync"
	"testing"
)

// TestInParallelLimit: every job runs, and as many as the limit at once,
// never more (the first limit jobs wait until all of them run: run one at
// a time, they would never finish).
func TestInParallelLimit(t *testing.T) {
	const limit, n = 3, 20
	var mu sync.Mutex
	running, most, ran := 0, 0, 0
	full := make(chan struct{})
	var once sync.Once
	jobs := make([]func() error, n)
	for i := range jobs {
		jobs[i] = func() error {
			mu.Lock()
			running++
			most = max(most, running)
			if running == limit {
				once.Do(func() { close(full) })
			}
			mu.Unlock()
			<-full
			mu.Lock()
			running--
			ran++
			mu.Unlock()
			return nil
		}
	}
	if err := inParallel(limit, jobs); err != nil {
		t.Fatal(err)
	}
	if ran != n || most != limit {
		t.Fatalf("%d of %d jobs ran, at most %d at once; want all, %d at once", ran, n, most, limit)
	}
}

// TestInParallelFirstError: the error returned is the first failure in
// the jobs' order, though a later job failed first.
func TestInParallelFirstError(t *testing.T) {
	later := make(chan struct{})
	jobs := make([]func() error, 8)
	for i := range jobs {
		jobs[i] = func() error {
			switch i {
			case 2:
				<-later
				return fmt.Errorf("job %d", i)
			case 6:
				defer close(later)
				return fmt.Errorf("job %d", i)
			}
			return nil
		}
	}
	err := inParallel(len(jobs), jobs)
	if err == nil || err.Error() != "job 2" {
		t.Fatalf("got %v, want job 2's error", err)
	}
	if err := inParallel(1, nil); err != nil {
		t.Fatal("no jobs: want no error")
	}
}
