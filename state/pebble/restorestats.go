package pebble

import (
	"log/slog"
	"sync/atomic"
	"time"

	pebbledb "github.com/cockroachdb/pebble/v2"
)

// restoreStats is where the time of restoring an incremental checkpoint
// into the database went, logged when the restore ends
// (bench/largestate reads the line to split its restore times).
type restoreStats struct {
	files, bytes    int64         // files fetched (SSTs linked or downloaded, MANIFEST, OPTIONS)
	chunks, wal     int64         // WAL chunks fetched and their bytes
	fetch           time.Duration // every file and chunk, in parallel
	open            openStats
	clip, total     time.Duration
	keyGroups       string
	sources, copied int // manifests restored; of them copied in (rescale)
	// copy is the time copyFrom spent scanning the copied sources and
	// writing their entries in range (their fetch is in fetch);
	// copiedBytes the keys and values it wrote.
	copy        time.Duration
	copiedBytes int64
}

// openStats is what Pebble's Open did: the whole call, and of it the
// flushes (of the WAL it replayed) and compactions that ended during it.
// The listener runs on Pebble's goroutines, hence the atomics.
type openStats struct {
	// sched is the paused compaction scheduler the database was opened
	// with (compactions.go), to resume once Open has returned.
	sched       *pausedScheduler
	open        time.Duration
	flush       atomic.Int64 // ns
	compactions atomic.Int64 // ns
	compacted   atomic.Int64 // how many compactions
	opening     atomic.Bool  // the listener counts while set
}

// listener returns the event listener that counts into s while opening.
func (s *openStats) listener() *pebbledb.EventListener {
	s.opening.Store(true)
	return &pebbledb.EventListener{
		FlushEnd: func(fi pebbledb.FlushInfo) {
			if s.opening.Load() {
				s.flush.Add(int64(fi.TotalDuration))
			}
		},
		CompactionEnd: func(ci pebbledb.CompactionInfo) {
			if s.opening.Load() {
				s.compactions.Add(int64(ci.TotalDuration))
				s.compacted.Add(1)
			}
		},
	}
}

// log writes the stats at info level.
func (s *restoreStats) log(dir string) {
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	slog.Info("pebble: restored incremental checkpoint", "dir", dir, "key_groups", s.keyGroups,
		"sources", s.sources, "copied", s.copied,
		"files", s.files, "bytes", s.bytes, "wal_chunks", s.chunks, "wal_bytes", s.wal,
		"fetch_ms", ms(s.fetch), "open_ms", ms(s.open.open), "open_flush_ms", ms(time.Duration(s.open.flush.Load())),
		"open_compaction_ms", ms(time.Duration(s.open.compactions.Load())), "open_compactions", s.open.compacted.Load(), "clip_ms", ms(s.clip),
		"copy_ms", ms(s.copy), "copied_bytes", s.copiedBytes, "total_ms", ms(s.total))
}
