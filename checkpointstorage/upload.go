package checkpointstorage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sync"
	"sync/atomic"

	"github.com/weirstream/weir/event"
)

// UploadError reports a file the storage could not write or read, after
// every attempt the retry policy allowed.
type UploadError struct {
	// Path names the file: a filesystem path or a URL.
	Path string
	// Attempts is how many times it was tried.
	Attempts int
	// Err is the last attempt's error.
	Err error
}

// Error names the file, the attempts and the cause.
func (e *UploadError) Error() string {
	if e.Attempts == 1 {
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s: %v (tried %d times)", e.Path, e.Err, e.Attempts)
}

// Unwrap returns the last attempt's error.
func (e *UploadError) Unwrap() error { return e.Err }

// retry runs op on the object rel, each attempt bounded by OpTimeout,
// until it succeeds, fails for good, or the retry policy gives up. The
// error names the object (*UploadError).
func (s *FS) retry(rel string, op func(ctx context.Context) error) error {
	for failed := 0; ; {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.OpTimeout)
		err := op(ctx)
		cancel()
		if err == nil {
			return nil
		}
		failed++
		delay, again := s.opts.Retry.Next(failed)
		if !again || errors.As(err, new(permanent)) || !s.obj.retryable(err) {
			return &UploadError{Path: s.Where(rel), Attempts: failed, Err: err}
		}
		s.opts.sleep(delay)
	}
}

// permanent is an error retrying cannot help: not the store's.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// get reads rel, retrying transient failures; the error is the store's own
// (matching fs.ErrNotExist when rel is missing), since callers classify it.
func (s *FS) get(rel string) (b []byte, err error) {
	err = s.retry(rel, func(ctx context.Context) (err error) { b, err = s.obj.get(ctx, rel); return err })
	return b, unwrapUpload(err)
}

func (s *FS) size(rel string) (n int64, err error) {
	err = s.retry(rel, func(ctx context.Context) (err error) { n, err = s.obj.size(ctx, rel); return err })
	return n, unwrapUpload(err)
}

func (s *FS) list(dir string) (es []entry, err error) {
	err = s.retry(dir, func(ctx context.Context) (err error) { es, err = s.obj.list(ctx, dir); return err })
	return es, unwrapUpload(err)
}

func (s *FS) remove(rel string, dir bool) error {
	s.known.forget(rel, dir)
	if s.opts.Faults != nil && dir {
		if err := s.removeEach(rel); err != nil {
			return err
		}
	}
	if err := s.fault("delete", rel); err != nil {
		return &UploadError{Path: s.Where(rel), Attempts: 1, Err: err}
	}
	return s.retry(rel, func(ctx context.Context) error { return s.obj.remove(ctx, rel, dir) })
}

// removeEach deletes the files under directory rel one by one, as a
// bucket does, so that Options.Faults sees (and may stop) each delete.
func (s *FS) removeEach(rel string) error {
	es, err := s.list(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range es {
		child := path.Join(rel, e.name)
		if e.dir {
			err = s.removeEach(child)
		} else {
			err = s.remove(child, false)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// op names a put of mode for Options.Faults.
func (m putMode) op() string {
	switch m {
	case putState:
		return "upload"
	case putExclusive:
		return "metadata"
	}
	return "write"
}

// fault calls Options.Faults, if set, before op on key.
func (s *FS) fault(op, key string) error {
	if s.opts.Faults == nil {
		return nil
	}
	return s.opts.Faults(op, key)
}

func (s *FS) exists(rel string) (ok bool, err error) {
	err = s.retry(rel, func(ctx context.Context) (err error) { ok, err = s.obj.exists(ctx, rel); return err })
	return ok, unwrapUpload(err)
}

func (s *FS) rename(from, to string) error {
	s.known.forget(from, true)
	if err := s.fault("rename", from); err != nil {
		return &UploadError{Path: s.Where(from), Attempts: 1, Err: err}
	}
	return s.retry(from, func(ctx context.Context) error { return s.obj.rename(ctx, from, to) })
}

func (s *FS) put(rel string, data []byte, mode putMode) error {
	if err := s.fault(mode.op(), rel); err != nil {
		return &UploadError{Path: s.Where(rel), Attempts: 1, Err: err}
	}
	unanswered := false // an attempt failed without saying whether it was stored
	err := s.retry(rel, func(ctx context.Context) error {
		err := s.obj.put(ctx, rel, data, mode)
		unanswered = unanswered || (err != nil && s.obj.retryable(err))
		return err
	})
	if mode == putExclusive && unanswered && errors.Is(err, errExists) && s.holds(rel, data) {
		// An earlier attempt's PUT was stored but its answer lost, and
		// the retry met it: the object is this write's own. (Without a
		// lost answer, an existing object is another write's, even with
		// the same bytes.)
		return nil
	}
	return err
}

// holds reports whether rel exists with exactly data.
func (s *FS) holds(rel string, data []byte) bool {
	b, err := s.get(rel)
	return err == nil && bytes.Equal(b, data)
}

// unwrapUpload keeps a single attempt's error as the store returned it
// (an os.PathError names the file already).
func unwrapUpload(err error) error {
	if ue, ok := err.(*UploadError); ok && ue.Attempts == 1 {
		return ue.Err
	}
	return err
}

// StateFile is one file of a subtask's part of a checkpoint, for
// WriteStates.
type StateFile struct {
	// Name is the file name inside chk-<id>; see WriteState.
	Name string
	Data []byte
}

// WriteStates writes files into checkpoint id as WriteState does, in
// parallel: at most Options.UploadConcurrency files at once over every
// caller of this storage. It returns their handles in the order of files,
// or the first failure, which names the file (the checkpoint is then
// declined; files already written are left to Discard or GC).
func (s *FS) WriteStates(id event.CheckpointID, files []StateFile) ([]Handle, error) {
	hs := make([]Handle, len(files))
	err := s.parallel(len(files), func(i int) (err error) {
		hs[i], err = s.WriteState(id, files[i].Name, files[i].Data)
		return err
	})
	if err != nil {
		return nil, err
	}
	return hs, nil
}

// parallel runs write(0) … write(n-1), at most Options.UploadConcurrency
// at once over every caller of this storage, and returns the first error
// in index order. After a failure it starts no more writes.
func (s *FS) parallel(n int, write func(i int) error) error {
	errs := make([]error, n)
	var stop atomic.Bool // set by the first failure: start no more uploads
	var wg sync.WaitGroup
	for i := range n {
		s.uploads <- struct{}{}
		if stop.Load() {
			<-s.uploads
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-s.uploads; wg.Done() }()
			if errs[i] = write(i); errs[i] != nil {
				stop.Store(true)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
