package pebble

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/weirstream/weir/state"
)

// fetch puts m's files into dir, linking the SSTs where the storage
// allows, and its WAL files, every file and WAL chunk fetched in parallel
// (Options.TransferThreads at once), and returns the shared SSTs by local name.
// st counts what it fetched and how long it took.
func (b *Backend) fetch(m *manifest, dir string, st *restoreStats) (map[string]state.FileHandle, error) {
	if err := b.checkRemote(m); err != nil {
		return nil, err
	}
	start := time.Now()
	shared := map[string]state.FileHandle{}
	var jobs []func() error
	for _, f := range m.Files {
		if f.Name != filepath.Base(f.Name) || f.Name == "." || f.Name == ".." {
			return nil, corrupt("incremental snapshot manifest: file name %q", f.Name)
		}
		if f.Remote {
			continue // read in place
		}
		if f.Inline {
			if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
				return nil, fmt.Errorf("pebble: restoring %s of subtask state with key groups %v: %w", f.Name, m.keyGroups(), err)
			}
			continue
		}
		jobs = append(jobs, func() error {
			if err := b.opts.RestoreFiles.Fetch(f.Handle, filepath.Join(dir, f.Name), sharedFile(f.Name)); err != nil {
				return fmt.Errorf("pebble: restoring %s of subtask state with key groups %v: %w", f.Name, m.keyGroups(), err)
			}
			return nil
		})
		if sharedFile(f.Name) {
			shared[f.Name] = f.Handle
		}
		st.files++
		st.bytes += f.Handle.Size
	}
	logJobs, err := b.logJobs(m, dir, st)
	if err != nil {
		return nil, err
	}
	if err := inParallel(b.opts.TransferThreads, append(jobs, logJobs...)); err != nil {
		return nil, err
	}
	if err := joinLogs(m, dir); err != nil {
		return nil, err
	}
	st.fetch += time.Since(start)
	return shared, nil
}

// logJobs returns the fetches of m's WAL chunks, each into a part file of
// its own beside the WAL file it belongs to (joinLogs puts them
// together).
func (b *Backend) logJobs(m *manifest, dir string, st *restoreStats) ([]func() error, error) {
	var jobs []func() error
	for _, l := range m.Logs {
		if l.Name != filepath.Base(l.Name) || !isLog(l.Name) {
			return nil, corrupt("incremental snapshot manifest: WAL file name %q", l.Name)
		}
		for i, h := range l.Chunks {
			jobs = append(jobs, func() error {
				if err := b.opts.RestoreFiles.Fetch(h, partName(dir, l.Name, i), false); err != nil {
					return fmt.Errorf("pebble: restoring WAL %s of subtask state with key groups %v: %w", l.Name, m.keyGroups(), err)
				}
				return nil
			})
			st.chunks++
			st.wal += h.Size
		}
	}
	return jobs, nil
}

// partName is the local file of chunk i of WAL file log.
func partName(dir, log string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("%s.part%d", log, i))
}

// joinLogs makes each WAL file of m from its fetched chunks, in order:
// the one chunk renamed, or their concatenation.
func joinLogs(m *manifest, dir string) error {
	for _, l := range m.Logs {
		dst := filepath.Join(dir, l.Name)
		var err error
		if len(l.Chunks) == 1 {
			err = os.Rename(partName(dir, l.Name, 0), dst)
		} else {
			err = concatParts(dst, dir, l)
		}
		if err != nil {
			return fmt.Errorf("pebble: restoring WAL %s of subtask state with key groups %v: %w", l.Name, m.keyGroups(), err)
		}
	}
	return nil
}

// concatParts writes the chunks of l, fetched into their part files,
// into dst, removing the parts.
func concatParts(dst, dir string, l manifestLog) (err error) {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	for i := range l.Chunks {
		if err := appendFile(f, partName(dir, l.Name, i)); err != nil {
			return err
		}
	}
	return nil
}

// appendFile appends the file at path to dst and removes it.
func appendFile(dst *os.File, path string) error {
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	return errors.Join(err, src.Close(), os.Remove(path))
}

// inParallel runs the jobs, at most limit at once, and returns the first
// failure in the jobs' order; after a failure it starts no more.
func inParallel(limit int, jobs []func() error) error {
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	var failed sync.Once
	stop := make(chan struct{})
	for i, job := range jobs {
		select {
		case sem <- struct{}{}:
		case <-stop:
		}
		select {
		case <-stop:
			wg.Wait()
			return firstError(errs)
		default:
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if errs[i] = job(); errs[i] != nil {
				failed.Do(func() { close(stop) })
			}
		}()
	}
	wg.Wait()
	return firstError(errs)
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
