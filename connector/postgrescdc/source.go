package postgrescdc

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/jackc/pglogrepl"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// Source is the postgres-cdc source: one split, the captured table, read
// by one subtask (the others idle).
type Source struct {
	Options Options
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

// Enumerate returns the table's split with no position: a fresh start.
func (s *Source) Enumerate(context.Context) ([]operator.SplitState, error) {
	return []operator.SplitState{{ID: s.splitID()}}, nil
}

func (s *Source) splitID() string {
	return fmt.Sprintf("postgres-cdc:%s.%s.%s", s.Options.Database, s.Options.Schema, s.Options.Table)
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
	c, cancel := context.WithCancel(parent)
	return &reader{o: s.Options, log: log, ctx: c, cancel: cancel, items: make(chan item, 512),
		avail: make(chan struct{}, 1), batch: 256, pending: map[event.CheckpointID]pglogrepl.LSN{}}, nil
}

// itemKind is what the fetcher hands the reader.
type itemKind uint8

const (
	snapBegin   itemKind = iota // a snapshot starts: band (and the slot's start)
	snapRow                     // a snapshot row: rows[0], key
	snapDone                    // the snapshot has been read to its end
	streamStart                 // latest-offset: the stream starts at lsn, no snapshot
	change                      // a change of the transaction committed at commit: rows, index
	commit                      // the transaction committed at commit ended at lsn
	failed                      // err
)

type item struct {
	kind   itemKind
	rows   []event.Row
	key    []any
	band   Band
	lsn    pglogrepl.LSN
	commit pglogrepl.LSN
	index  int
	err    error
}

// reader reads the split: a fetcher goroutine produces items (snapshot
// rows, then changes) into a channel; Poll emits them on the subtask
// goroutine and advances the position, so a checkpoint's position is
// exactly after the last row emitted.
type reader struct {
	o      Options
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	items  chan item
	avail  chan struct{}
	split  string
	batch  int // items per Poll
	pos    Position
	active bool
	// pending are the stream positions of checkpoints taken and not yet
	// complete; confirmed is the newest one complete, which the fetcher
	// reports to the slot as flushed (the server may then drop the WAL
	// before it). Only a completed checkpoint advances the slot: a
	// restore of it must find its changes still there.
	pending   map[event.CheckpointID]pglogrepl.LSN
	confirmed atomic.Uint64
}

func (r *reader) AddSplits(splits []operator.SplitState) error {
	for _, s := range splits {
		if r.active {
			return fmt.Errorf("postgres-cdc: reader got split %s besides %s", s.ID, r.split)
		}
		fresh := len(s.Position) == 0
		if !fresh {
			p, err := decodePosition(s.Position, keyParser(r.keyTypes()))
			if err != nil {
				return err
			}
			r.pos = p
		}
		r.split, r.active = s.ID, true
		f := &fetcher{o: r.o, log: r.log, items: r.items, avail: r.avail, confirmed: &r.confirmed, restored: r.pos, fresh: fresh}
		r.wg.Go(func() {
			if err := f.run(r.ctx); err != nil && r.ctx.Err() == nil {
				f.send(r.ctx, item{kind: failed, err: err})
			}
		})
	}
	return nil
}

func (r *reader) keyTypes() []types.Type {
	var out []types.Type
	for _, i := range r.o.keyIndexes() {
		out = append(out, r.o.Fields[i].Type)
	}
	return out
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

// apply emits an item's rows and moves the position past it.
func (r *reader) apply(it item, out operator.ReaderOutput) error {
	for _, row := range it.rows {
		out.Collect(r.split, event.Record{Value: row, Timestamp: event.NoTimestamp})
	}
	p := &r.pos
	switch it.kind {
	case snapBegin:
		if p.SlotStart == 0 {
			p.SlotStart = it.lsn
		}
		p.Snapshotting, p.Bands = true, addBand(p.Bands, it.band.After, it.band.At, compareKeys)
	case snapRow:
		p.LastKey = it.key
	case snapDone:
		p.Snapshotting, p.LastKey, p.Done = false, nil, p.SlotStart
	case streamStart:
		p.SlotStart, p.Done = it.lsn, it.lsn
	case change:
		p.InTxn, p.Emitted = it.commit, it.index+1
	case commit:
		p.Done, p.InTxn, p.Emitted = it.lsn, 0, 0
		if it.commit >= maxBand(p.Bands) {
			p.Bands = nil
		}
	case failed:
		return it.err
	}
	return nil
}

func (r *reader) Available() <-chan struct{} { return r.avail }

// Snapshotting tells whether the reader is still in the table's snapshot
// (for tests that fail a job there).
func (r *reader) Snapshotting() bool { return !r.active || r.pos.Snapshotting || r.pos.Done == 0 }

// SnapshotState returns the split's position after the last emitted row.
func (r *reader) SnapshotState(id event.CheckpointID) ([]operator.SplitState, error) {
	if !r.active {
		return nil, nil
	}
	if r.pos.SlotStart == 0 { // nothing emitted, no slot known: a fresh start again
		return []operator.SplitState{{ID: r.split}}, nil
	}
	b, err := encodePosition(r.pos)
	if err != nil {
		return nil, err
	}
	if !r.pos.Snapshotting && r.pos.Done > 0 {
		r.pending[id] = r.pos.Done
	}
	return []operator.SplitState{{ID: r.split, Position: b}}, nil
}

// NotifyCheckpointComplete lets the slot forget the WAL before the
// checkpoint's position.
func (r *reader) NotifyCheckpointComplete(id event.CheckpointID) error {
	for cid, lsn := range r.pending {
		if cid > id {
			continue
		}
		if uint64(lsn) > r.confirmed.Load() {
			r.confirmed.Store(uint64(lsn))
		}
		delete(r.pending, cid)
	}
	return nil
}

func (r *reader) Close() error {
	r.cancel()
	r.wg.Wait()
	return nil
}
