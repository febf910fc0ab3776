package exec

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/binrow"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/types"
)

// DedupOptions configures a Deduplicate: the query
//
//	SELECT … FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY keys
//	  ORDER BY time ASC|DESC) AS rn FROM t) WHERE rn = 1
type DedupOptions struct {
	// PartitionKeys are the PARTITION BY fields.
	PartitionKeys []int
	// KeepLast keeps the last row of each key (ORDER BY time DESC);
	// default false keeps the first (ORDER BY time ASC).
	KeepLast bool
	// RowTime orders by the event-time field TimeField (a time.Time or an
	// int64 of ms). Default false: by processing time, that is, by
	// arrival.
	RowTime bool
	// TimeField is the rowtime field when RowTime is set.
	TimeField int
	// NoUpdateBefore emits only +U on a change, not -U then +U. Default
	// false.
	NoUpdateBefore bool
	// StateTTL is table.exec.state.ttl: a key unseen this long is
	// forgotten, and its next row counts as a first row again. Keep-first
	// deduplication needs it, or its state grows with every new key.
	// Default 0: keep state forever.
	StateTTL time.Duration
	// Types are the input's column types: with them (every type a binary
	// row takes) the kept row is stored as a binary row, built once, not
	// as boxed fields encoded again by every full snapshot.
	Types []types.Type
}

// Validate checks the options.
func (o *DedupOptions) Validate() error {
	if err := checkFields("PartitionKeys", concatInts(o.PartitionKeys, o.TimeField), 0); err != nil {
		return err
	}
	return checkTTL(o.StateTTL)
}

// Key is the KeyFunc the operator's input must be partitioned by.
func (o *DedupOptions) Key() KeyFunc { return FieldKey(o.PartitionKeys...) }

// Deduplicate keeps the first or the last row of each key (Flink's
// deduplication). Output rows are the input rows, unchanged (a selected rn
// is always 1: the planner appends it).
//
//   - first row, proctime: +I for a key's first row, later rows dropped.
//     The state is one flag per key. Input: insert-only.
//   - first row, rowtime: +I for the first row, then -U old / +U new when
//     a row with an earlier rowtime arrives. Input: insert-only.
//   - last row, proctime: +I for the first row, then -U old / +U new for
//     every later row.
//   - last row, rowtime: as proctime, but a row whose rowtime is before the
//     kept row's is dropped (an equal rowtime replaces it: the later
//     arrival wins, as in Flink).
//
// Keep-last also takes an updating input: a -U or -D row deletes the
// key's row (-D), as Flink's deduplication on a changelog does.
type Deduplicate struct {
	operator.Base
	opts  DedupOptions
	key   KeyFunc
	seen  state.ValueState[bool]     // first row on proctime
	last  state.ValueState[stateRow] // the kept row, otherwise
	codec stateRowCodec              // last's
	build binrow.Builder
	// encodes: last keeps only its rows' encodings
	// (state.KeepsEncodings), so a row is built in enc, reused.
	encodes bool
	enc     []byte
}

// NewDeduplicate returns a Deduplicate; its input must be keyed by
// opts.Key().
func NewDeduplicate(opts DedupOptions) (*Deduplicate, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Deduplicate{opts: opts, key: opts.Key()}, nil
}

// Open registers the state.
func (d *Deduplicate) Open(ctx *operator.Context) error {
	if err := d.Base.Open(ctx); err != nil {
		return err
	}
	ttl := ttlConfig(d.opts.StateTTL)
	if !d.opts.KeepLast && !d.opts.RowTime {
		d.seen = state.Value(ctx.Keyed, state.ValueDescriptor[bool]{Name: "dedup-seen", TTL: ttl})
	} else {
		d.codec = stateRowCodec{layout: rowLayout(d.opts.Types), what: "Deduplicate"}
		d.last = state.Value(ctx.Keyed, state.ValueDescriptor[stateRow]{Name: "dedup-row", Codec: d.codec.stateCodec(), TTL: ttl})
		d.encodes = state.KeepsEncodings(d.last)
	}
	return nil
}

// ProcessElement decides whether the row replaces its key's kept row.
func (d *Deduplicate) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	if err := d.check(row); err != nil {
		return err
	}
	setKey(d.Ctx, d.key(row.Fields))
	switch {
	case !row.Kind.IsAccumulate():
		return d.retract(row, r.Timestamp)
	case d.seen != nil:
		if _, ok := d.seen.Value(); !ok {
			d.seen.Update(true)
			emit(d.Ctx, event.Insert, row.Fields, r.Timestamp)
		}
		return nil
	}
	kept, ok := d.last.Value()
	var prev []any
	if ok {
		prev = d.codec.fieldsOf(kept)
	}
	if ok && d.opts.RowTime {
		newer, err := d.replaces(prev, row.Fields)
		if err != nil || !newer {
			return err
		}
	}
	d.last.Update(d.stored(row.Fields))
	if !ok {
		emit(d.Ctx, event.Insert, row.Fields, r.Timestamp)
		return nil
	}
	if !d.opts.NoUpdateBefore {
		emit(d.Ctx, event.UpdateBefore, prev, r.Timestamp)
	}
	emit(d.Ctx, event.UpdateAfter, row.Fields, r.Timestamp)
	return nil
}

// stored is row as last keeps it: built in d.enc when last keeps only
// encodings, else in an allocation of its own (stateRowCodec.stored). The
// kept row prev that ProcessElement emits after the update is not d.enc:
// it is read from state, which never writes over a row it returned.
func (d *Deduplicate) stored(row []any) stateRow {
	if d.encodes {
		return d.codec.over(&d.enc, row)
	}
	return d.codec.stored(nil, &d.build, row)
}

// check rejects a row the configuration cannot take.
func (d *Deduplicate) check(row event.Row) error {
	if err := checkWidth("Deduplicate", row.Fields, d.opts.PartitionKeys...); err != nil {
		return err
	}
	if row.Kind != event.Insert && !d.opts.KeepLast {
		return fmt.Errorf("%w: keep-first Deduplicate got a %s row", ErrUpdatesUnsupported, row.Kind)
	}
	if !d.opts.RowTime {
		return nil
	}
	if err := checkWidth("Deduplicate", row.Fields, d.opts.TimeField); err != nil {
		return err
	}
	if _, err := timeMillis(row.Fields[d.opts.TimeField]); err != nil {
		return fmt.Errorf("sql/exec: Deduplicate: rowtime field %d: %w", d.opts.TimeField, err)
	}
	return nil
}

// replaces reports whether, ordering by rowtime, cur replaces the kept
// row prev: for the last row when it is not older, for the first when it
// is strictly older. ProcessElement checked both times.
func (d *Deduplicate) replaces(prev, cur []any) (bool, error) {
	pt, err := timeMillis(prev[d.opts.TimeField])
	if err != nil {
		return false, err
	}
	ct, err := timeMillis(cur[d.opts.TimeField])
	if err != nil {
		return false, err
	}
	if d.opts.KeepLast {
		return ct >= pt, nil
	}
	return ct < pt, nil
}

// retract handles a -U or -D row (keep-last only): it deletes the key's
// row.
func (d *Deduplicate) retract(_ event.Row, ts event.Timestamp) error {
	kept, ok := d.last.Value()
	if !ok {
		return nil
	}
	prev := d.codec.fieldsOf(kept)
	d.last.Clear()
	emit(d.Ctx, event.Delete, prev, ts)
	return nil
}
