package mysqlcdc

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// Source is the mysql-cdc source. Its splits are primary-key ranges of
// the table (chunks of 'scan.incremental.snapshot.chunk.size' rows),
// spread over the subtasks; each subtask snapshots its ranges and follows
// the binlog for their keys.
type Source struct {
	Options Options

	mu     sync.Mutex
	splits []operator.SplitState // the chunks, computed once (see Enumerate)
	hub    *hub                  // the binlog read once for the readers (made by the first)
}

// NewSource checks o and returns its source.
func NewSource(o Options) (*Source, error) {
	if err := o.checkKey(); err != nil {
		return nil, err
	}
	return &Source{Options: o}, nil
}

// Bounded is false: the stream never ends.
func (s *Source) Bounded() bool { return false }

// Enumerate splits the table into key ranges (initial mode; the other
// modes read the binlog only, as one split). Every subtask asks for the
// splits and keeps those assigned to it, so all of them must get the same
// ranges: the table changes meanwhile, so they are computed once per
// Source and kept. (Any ranges would do — each key lies in exactly one —
// but every subtask must use the same.)
func (s *Source) Enumerate(ctx context.Context) ([]operator.SplitState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.splits != nil {
		return s.splits, nil
	}
	o := s.Options
	db, err := o.open()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	t, err := o.inspect(ctx, db)
	if err != nil {
		return nil, err
	}
	var bounds [][]any
	if o.StartupMode == "initial" {
		if bounds, err = t.chunkBounds(ctx, db, o.ChunkSize, o.keyTypes()); err != nil {
			return nil, err
		}
	}
	var out []operator.SplitState
	for j := 0; j <= len(bounds); j++ {
		p := Position{}
		if j > 0 {
			p.Lo = bounds[j-1]
		}
		if j < len(bounds) {
			p.Hi = bounds[j]
		}
		b, err := encodePosition(p)
		if err != nil {
			return nil, err
		}
		out = append(out, operator.SplitState{ID: fmt.Sprintf("mysql-cdc:%s.%s#%d", t.schema, t.name, j), Position: b})
	}
	s.splits = out
	return out, nil
}

// AssignSplit spreads the chunks round-robin over the subtasks.
func (s *Source) AssignSplit(id string, n int) int {
	_, j, _ := strings.Cut(id, "#")
	i, err := strconv.Atoi(j)
	if err != nil {
		return operator.HashSplit(id, n)
	}
	return i % n
}

// CreateReader returns a subtask's reader.
func (s *Source) CreateReader(ctx operator.ReaderContext) (operator.SourceReader, error) {
	log := ctx.Logger
	if log == nil {
		log = slog.Default()
	}
	parent := ctx.Context
	if parent == nil {
		parent = context.Background()
	}
	id, err := s.Options.serverID(ctx.Subtask.Index, max(ctx.Parallelism, 1))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.hub == nil {
		s.hub = newHub(s.Options, log)
	}
	h := s.hub
	s.mu.Unlock()
	c, cancel := context.WithCancel(parent)
	return &reader{o: s.Options, log: log, ctx: c, cancel: cancel, serverID: id, hub: h, items: make(chan item, 512),
		avail: make(chan struct{}, 1), batch: 256, pos: map[string]*Position{}}, nil
}

// reader reads a subtask's splits: a fetcher goroutine produces items
// (snapshot rows, then changes) into a channel; Poll emits them on the
// subtask goroutine and advances their split's position, so a
// checkpoint's positions are exactly after the last rows emitted.
type reader struct {
	o        Options
	log      *slog.Logger
	ctx      context.Context
	cancel   context.CancelFunc
	serverID uint32
	hub      *hub
	wg       sync.WaitGroup
	items    chan item
	avail    chan struct{}
	batch    int // items per Poll
	ids      []string
	pos      map[string]*Position
}

func (r *reader) AddSplits(splits []operator.SplitState) error {
	if len(splits) == 0 {
		return nil
	}
	if len(r.ids) > 0 {
		return fmt.Errorf("mysql-cdc: reader got splits after its first ones")
	}
	f := &fetcher{o: r.o, log: r.log, serverID: r.serverID, hub: r.hub, items: r.items, avail: r.avail}
	for _, s := range splits {
		p, err := decodePosition(s.Position, keyParser(r.o.keyTypes()))
		if err != nil {
			return err
		}
		r.ids, r.pos[s.ID] = append(r.ids, s.ID), &p
		f.splits = append(f.splits, &fsplit{id: s.ID, restored: p, p: p})
	}
	r.wg.Go(func() {
		if err := f.run(r.ctx); err != nil && r.ctx.Err() == nil {
			select {
			case r.items <- item{kind: failed, err: err}:
			case <-r.ctx.Done():
			}
			select {
			case r.avail <- struct{}{}:
			default:
			}
		}
	})
	return nil
}

// Poll emits what the fetcher has produced, up to one batch.
func (r *reader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	for range r.batch {
		select {
		case it := <-r.items:
			if err := r.apply(it, out); err != nil {
				return operator.NothingAvailable, err
			}
		default:
			return operator.NothingAvailable, nil
		}
	}
	return operator.MoreAvailable, nil
}

// apply emits an item's rows and moves its split's position past it.
func (r *reader) apply(it item, out operator.ReaderOutput) error {
	if it.kind == failed {
		return it.err
	}
	for _, row := range it.rows {
		out.Collect(it.split, event.Record{Value: row, Timestamp: event.NoTimestamp})
	}
	if it.kind == commit {
		for _, p := range r.pos {
			advance(p, it)
		}
		return nil
	}
	advance(r.pos[it.split], it)
	return nil
}

func (r *reader) Available() <-chan struct{} { return r.avail }

// Snapshotting tells whether a split of the reader is still in its
// snapshot (for tests that fail a job there).
func (r *reader) Snapshotting() bool {
	for _, p := range r.pos {
		if p.Snapshotting || p.Start.IsZero() {
			return true
		}
	}
	return false
}

// SnapshotState returns every split's position after the last emitted row.
func (r *reader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	var out []operator.SplitState
	for _, id := range r.ids {
		b, err := encodePosition(*r.pos[id])
		if err != nil {
			return nil, err
		}
		out = append(out, operator.SplitState{ID: id, Position: b})
	}
	return out, nil
}

// NotifyCheckpointComplete has nothing to do: the server keeps its binlog
// by time (binlog_expire_logs_seconds), not by what replicas confirmed.
func (r *reader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }

func (r *reader) Close() error {
	r.cancel()
	r.wg.Wait()
	return nil
}
