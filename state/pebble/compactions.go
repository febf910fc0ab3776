package pebble

import (
	"sync"
	"time"

	pebbledb "github.com/cockroachdb/pebble/v2"
)

// pausedScheduler is the database's compaction scheduler (Pebble's
// Experimental.CompactionScheduler): as Pebble's default, it lets the
// database run as many compactions as the database asks for
// (GetAllowedWithoutPermission), but none while paused. A restore opens
// its database paused: Pebble's Open flushes the WAL it replayed, the
// flush's end schedules a compaction of the restored L0 files, and Open
// then waits for every running compaction before it returns
// (scanObsoleteFiles) — seconds of rewriting Lbase before the job's first
// record. Paused, the compaction is only picked and kept waiting; resume
// grants it once the restore is done, and it runs beside the job.
// DisableAutomaticCompactions cannot do this: Open copies the options,
// so the flag could not be turned off afterwards (Pebble v2.1.7).
//
// Granting calls into the database, which takes its own mutex, while the
// database calls TrySchedule with that mutex held: so the database is
// never called with mu held, and only the grant goroutine grants.
type pausedScheduler struct {
	db   pebbledb.DBForCompaction
	wake chan struct{} // a grant is worth trying
	stop chan struct{}
	done chan struct{}
	mu   struct {
		sync.Mutex
		running      int
		paused       bool
		unregistered bool
	}
}

// grantInterval is how often the scheduler looks for a compaction to
// grant besides when one ends: the database's allowed concurrency grows
// with L0 and compaction debt without telling the scheduler (Pebble's
// default scheduler samples it at the same rate).
const grantInterval = 100 * time.Millisecond

func newPausedScheduler(paused bool) *pausedScheduler {
	s := &pausedScheduler{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.mu.paused = paused
	return s
}

var _ pebbledb.CompactionScheduler = (*pausedScheduler)(nil)

// Register starts the grant goroutine.
func (s *pausedScheduler) Register(_ int, db pebbledb.DBForCompaction) {
	s.db = db
	go s.grantLoop()
}

// Unregister stops granting; the database calls it as it closes.
func (s *pausedScheduler) Unregister() {
	s.mu.Lock()
	s.mu.unregistered = true
	s.mu.Unlock()
	close(s.stop)
	<-s.done
}

// TrySchedule grants a compaction the database wants to start now, unless
// paused or at the allowed concurrency.
func (s *pausedScheduler) TrySchedule() (bool, pebbledb.CompactionGrantHandle) {
	if !s.reserve() {
		return false, nil
	}
	return true, s
}

// UpdateGetAllowedWithoutPermission is the database saying it may allow
// more compactions now.
func (s *pausedScheduler) UpdateGetAllowedWithoutPermission() { s.poke() }

// resume lets compactions run, and grants the ones waiting.
func (s *pausedScheduler) resume() {
	s.mu.Lock()
	s.mu.paused = false
	s.mu.Unlock()
	s.poke()
}

func (s *pausedScheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *pausedScheduler) grantLoop() {
	defer close(s.done)
	t := time.NewTicker(grantInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		case <-t.C:
		}
		s.grant()
	}
}

// grant starts waiting compactions up to the allowed concurrency.
func (s *pausedScheduler) grant() {
	for s.reserve() {
		ok := false
		if waiting, _ := s.db.GetWaitingCompaction(); waiting {
			ok = s.db.Schedule(s)
		}
		if !ok {
			s.release() // unused: nothing ended, nothing to wake for
			return
		}
	}
}

// reserve counts one more compaction running if one may start.
func (s *pausedScheduler) reserve() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.paused || s.mu.unregistered || s.mu.running >= s.db.GetAllowedWithoutPermission() {
		return false
	}
	s.mu.running++
	return true
}

// The grant handle: Done is the end of a compaction this scheduler
// granted; the rest is for schedulers that pace compactions.
func (s *pausedScheduler) Started()                                            {}
func (s *pausedScheduler) MeasureCPU(pebbledb.CompactionGoroutineKind)         {}
func (s *pausedScheduler) CumulativeStats(pebbledb.CompactionGrantHandleStats) {}

// Done ends a granted compaction; another may start.
func (s *pausedScheduler) Done() {
	s.release()
	s.poke()
}

func (s *pausedScheduler) release() {
	s.mu.Lock()
	s.mu.running--
	s.mu.Unlock()
}
