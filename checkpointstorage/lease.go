package checkpointstorage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// lease is a held bucket lock: the _lock object, whose ETag says that it
// is still the version this holder wrote. Every write is conditional —
// If-None-Match: * when there is none, If-Match: <the ETag read> to take
// a free one over or to renew one's own — so of two jobs racing for it,
// exactly one PUT succeeds.
type lease struct {
	s    *FS
	o    bucketObjects
	key  string
	h    Holder
	etag string
	// stop ends the renewing goroutine, which closes done.
	stop, done chan struct{}
}

// lockBucket takes the lease and renews it every LockLease/4 until it is
// released.
func (s *FS) lockBucket(o bucketObjects, h Holder) (func() error, error) {
	l := &lease{s: s, o: o, key: o.prefix + lockName, h: h, stop: make(chan struct{}), done: make(chan struct{})}
	if err := l.acquire(); err != nil {
		return nil, err
	}
	go l.renewEvery(s.opts.LockLease / 4)
	return l.release, nil
}

// acquire takes the lease unless a live holder has it. A lost race (the
// object changed between the read and the conditional write) reads again.
func (l *lease) acquire() error {
	for range 5 {
		cur, etag, err := l.read()
		if err != nil {
			return err
		}
		if etag != "" && !leaseFree(cur, time.Now(), l.s.opts.LockLease, l.h, processAlive) {
			return &LockedError{Dir: l.s.loc, Holder: cur, Lease: l.s.opts.LockLease}
		}
		if l.etag, err = l.write(l.h, etag); !errors.Is(err, errExists) {
			return err
		}
	}
	return fmt.Errorf("checkpointstorage: locking %s: other jobs keep taking its lease", l.s.loc)
}

// leaseFree reports whether cur, the lease's holder, has given it up:
// released it, exited (a process of this host that is gone), or not
// renewed it for lease. A lease that names nobody is free.
func leaseFree(cur Holder, now time.Time, lease time.Duration, me Holder, alive func(int) bool) bool {
	switch {
	case cur.Released || cur.PID == 0:
		return true
	case cur.Host == me.Host && cur.PID != me.PID && !alive(cur.PID):
		return true
	}
	return now.Sub(cur.Renewed) > lease
}

// renewEvery rewrites the lease with a new Renewed time every period. A
// lease that was taken over (its ETag changed: this holder failed to
// renew it in time) is lost: the storage then refuses to complete
// checkpoints. A failed request is tried again at the next period.
func (l *lease) renewEvery(period time.Duration) {
	defer close(l.done)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if l.tick(time.Now()) {
			return
		}
	}
}

// tick renews the lease at now; it reports true when the lease was lost,
// which it then records in the storage.
func (l *lease) tick(now time.Time) bool {
	if err := l.renew(now); !errors.Is(err, errExists) {
		return false
	}
	lost := fmt.Errorf("%w: lost the lease of checkpoint directory %s (not renewed within %v, and another job may have taken it): "+
		"this job completes no more checkpoints there", ErrLocked, l.s.loc, l.s.opts.LockLease)
	l.s.lost.Store(&lost)
	return true
}

// renew rewrites the lease as renewed at now.
func (l *lease) renew(now time.Time) error {
	h := l.h
	h.Renewed = now
	etag, err := l.write(h, l.etag)
	if err == nil {
		l.h, l.etag = h, etag
	}
	return err
}

// release stops renewing and marks the lease released, unless it was lost.
func (l *lease) release() error {
	close(l.stop)
	<-l.done
	if l.s.lost.Load() != nil {
		return nil
	}
	h := l.h
	h.Released = true
	if _, err := l.write(h, l.etag); !errors.Is(err, errExists) {
		return err
	}
	return nil // taken over meanwhile: not ours to release
}

// read returns the lease's holder and ETag; "" when there is none.
func (l *lease) read() (Holder, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), l.s.opts.OpTimeout)
	defer cancel()
	out, err := l.o.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(l.o.bucket), Key: aws.String(l.key)})
	if httpStatus(err) == 404 {
		return Holder{}, "", nil
	}
	if err != nil {
		return Holder{}, "", fmt.Errorf("checkpointstorage: reading %s: %w", l.o.where(lockName), err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return Holder{}, "", fmt.Errorf("checkpointstorage: reading %s: %w", l.o.where(lockName), err)
	}
	return decodeHolder(b), aws.ToString(out.ETag), nil
}

// write puts h as the lease if its ETag is still etag ("": if there is
// none) and returns the new ETag; errExists when the condition failed.
func (l *lease) write(h Holder, etag string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), l.s.opts.OpTimeout)
	defer cancel()
	in := &s3.PutObjectInput{Bucket: aws.String(l.o.bucket), Key: aws.String(l.key), Body: bytes.NewReader(encodeHolder(h)),
		ContentType: aws.String("application/json")}
	if etag == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(etag)
	}
	out, err := l.o.client.PutObject(ctx, in)
	switch status := httpStatus(err); {
	case status == 412 || status == 404 || status == 409:
		// 412: the condition failed; 404: If-Match on a lease deleted
		// meanwhile; 409: a concurrent conditional write.
		return "", errExists
	case err != nil:
		return "", fmt.Errorf("checkpointstorage: writing %s: %w", l.o.where(lockName), err)
	}
	return aws.ToString(out.ETag), nil
}
