package checkpointstorage

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// A second job locking a directory another job holds is refused with the
// holder's name, pid and host; once the first releases it, it gets it.
func TestLockRefusesSecondJob(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		loc, opts := b.loc(t)
		first, second := mustOpen(t, loc, opts), mustOpen(t, loc, opts)
		l, err := first.Lock("orders-h6")
		if err != nil {
			t.Fatal(err)
		}
		_, err = second.Lock("report-h6")
		var le *LockedError
		if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
			t.Fatalf("second Lock: %v, want a *LockedError", err)
		}
		host, _ := os.Hostname()
		if le.Holder.Job != "orders-h6" || le.Holder.PID != os.Getpid() || le.Holder.Host != host {
			t.Fatalf("holder %+v, want job orders-h6, pid %d on %s", le.Holder, os.Getpid(), host)
		}
		for _, want := range []string{`in use by job "orders-h6"`, "corrupt each other's checkpoints", "--checkpoint-dir"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
		l2, err := second.Lock("report-h6")
		if err != nil {
			t.Fatalf("Lock after Release: %v", err)
		}
		if err := l2.Release(); err != nil {
			t.Fatal(err)
		}
	})
}

// A bucket's lease left by a holder that stopped renewing it is taken over;
// the holder that lost it completes no more checkpoints there.
func TestLockBucketLeaseExpires(t *testing.T) {
	loc, opts := s3Loc(t)
	opts.LockLease = time.Hour
	first := mustOpen(t, loc, opts)
	l, err := first.Lock("old-h6")
	if err != nil {
		t.Fatal(err)
	}
	// The holder "crashed" an hour and a second ago: its lease is free.
	ls := leaseOf(t, first, l)
	ls.h.Host = "elsewhere"
	if err := ls.renew(time.Now().Add(-time.Hour - time.Second)); err != nil {
		t.Fatal(err)
	}
	second := mustOpen(t, loc, opts)
	l2, err := second.Lock("new-h6")
	if err != nil {
		t.Fatalf("Lock of an expired lease: %v", err)
	}
	defer l2.Release()
	if !ls.tick(time.Now()) {
		t.Fatal("tick did not see the lease lost")
	}
	err = first.WriteMetadata(Metadata{ID: 1})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "lost the lease of checkpoint directory "+loc) {
		t.Fatalf("WriteMetadata after losing the lease: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("Release of a lease taken over: %v", err)
	}
}

// leaseOf returns the lease behind l, its renewing stopped.
func leaseOf(t *testing.T, s *FS, l *Lock) *lease {
	t.Helper()
	o := s.obj.(bucketObjects)
	ls := &lease{s: s, o: o, key: o.prefix + lockName, stop: make(chan struct{}), done: make(chan struct{})}
	h, etag, err := ls.read()
	if err != nil {
		t.Fatal(err)
	}
	ls.h, ls.etag = h, etag
	return ls
}

func TestLeaseFree(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	me := Holder{Job: "b", PID: 2, Host: "h"}
	alive := func(pid int) bool { return pid == 3 }
	for _, c := range []struct {
		name string
		cur  Holder
		free bool
	}{
		{"live holder here", Holder{PID: 3, Host: "h", Renewed: now}, false},
		{"dead holder here", Holder{PID: 4, Host: "h", Renewed: now}, true},
		{"this process", Holder{PID: 2, Host: "h", Renewed: now}, false},
		{"other host, renewed", Holder{PID: 4, Host: "x", Renewed: now.Add(-time.Minute)}, false},
		{"other host, expired", Holder{PID: 4, Host: "x", Renewed: now.Add(-time.Minute - time.Second)}, true},
		{"released", Holder{PID: 3, Host: "h", Renewed: now, Released: true}, true},
		{"nobody", Holder{}, true},
	} {
		if got := leaseFree(c.cur, now, time.Minute, me, alive); got != c.free {
			t.Errorf("%s: free %v, want %v", c.name, got, c.free)
		}
	}
}
