package exec

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// SinkMaterializerOptions configures a SinkUpsertMaterializer.
type SinkMaterializerOptions struct {
	// PrimaryKey are the fields of the sink's PRIMARY KEY. Required.
	PrimaryKey []int
	// StateTTL is table.exec.state.ttl. Default 0: keep state forever.
	StateTTL time.Duration
}

// Validate checks the options.
func (o *SinkMaterializerOptions) Validate() error {
	if len(o.PrimaryKey) == 0 {
		return fmt.Errorf("%w: a SinkUpsertMaterializer needs the sink's PRIMARY KEY fields", ErrInvalidOptions)
	}
	if err := checkFields("PrimaryKey", o.PrimaryKey, 0); err != nil {
		return err
	}
	return checkTTL(o.StateTTL)
}

// Key is the KeyFunc the operator's input must be partitioned by.
func (o *SinkMaterializerOptions) Key() KeyFunc { return FieldKey(o.PrimaryKey...) }

// SinkUpsertMaterializer turns a changelog whose rows for one sink key
// come from several upstream keys (an inner join on another column, whose
// rows move between join subtasks when the join key changes) into an
// upsert stream by the sink's primary key that a late retraction cannot
// corrupt (Flink's SinkUpsertMaterializer).
//
// Per sink key it keeps the rows currently alive, in arrival order:
//
//   - +I / +U appends the row (or replaces an equal one) and emits it: +I
//     when the key had no row, else +U.
//   - -U / -D removes the first equal row (all fields equal). Removing the
//     last row of the list emits the new last as +U, or -D when the list
//     became empty; removing any other row emits nothing, since the sink
//     already holds the newest row. A retraction of a row not held (its
//     state expired) is dropped.
//
// Why a list and not just the newest row: when an order moves from cust 1
// to cust 2, the join subtask of cust 2 may send +I(new) before the
// subtask of cust 1 sends -D(old). A sink applying that -D by its key
// would delete the new row; here the -D only removes old from the list
// and new stays.
type SinkUpsertMaterializer struct {
	operator.Base
	opts SinkMaterializerOptions
	key  KeyFunc
	rows state.ListState[[]any]
}

// NewSinkUpsertMaterializer returns a SinkUpsertMaterializer; its input
// must be keyed by opts.Key().
func NewSinkUpsertMaterializer(opts SinkMaterializerOptions) (*SinkUpsertMaterializer, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &SinkUpsertMaterializer{opts: opts, key: opts.Key()}, nil
}

// Open registers the state.
func (m *SinkUpsertMaterializer) Open(ctx *operator.Context) error {
	if err := m.Base.Open(ctx); err != nil {
		return err
	}
	m.rows = state.List(ctx.Keyed, state.ListDescriptor[[]any]{Name: "sink-materializer-rows", Codec: RowCodec{},
		TTL: ttlConfig(m.opts.StateTTL)})
	return nil
}

// ProcessElement applies the row to its key's list of alive rows.
func (m *SinkUpsertMaterializer) ProcessElement(r event.Record) error {
	row, err := rowOf(r.Value)
	if err != nil {
		return err
	}
	if err := checkWidth("SinkUpsertMaterializer", row.Fields, m.opts.PrimaryKey...); err != nil {
		return err
	}
	setKey(m.Ctx, m.key(row.Fields))
	rows := m.rows.Get()
	if row.Kind.IsAccumulate() {
		m.add(rows, row.Fields, r.Timestamp)
		return nil
	}
	m.remove(rows, row.Fields, r.Timestamp)
	return nil
}

func (m *SinkUpsertMaterializer) add(rows [][]any, fields []any, ts event.Timestamp) {
	kind := event.UpdateAfter
	if len(rows) == 0 {
		kind = event.Insert
	}
	if i := findRow(rows, fields); i >= 0 {
		rows[i] = fields
	} else {
		rows = append(rows, fields)
	}
	m.rows.Update(rows)
	emit(m.Ctx, kind, fields, ts)
}

func (m *SinkUpsertMaterializer) remove(rows [][]any, fields []any, ts event.Timestamp) {
	i := findRow(rows, fields)
	if i < 0 {
		return
	}
	last := i == len(rows)-1
	rows = append(rows[:i], rows[i+1:]...)
	m.rows.Update(rows)
	switch {
	case len(rows) == 0:
		emit(m.Ctx, event.Delete, fields, ts)
	case last:
		emit(m.Ctx, event.UpdateAfter, rows[len(rows)-1], ts)
	}
}

// findRow returns the index of the first row of rows equal to fields, or
// -1.
func findRow(rows [][]any, fields []any) int {
	for i, r := range rows {
		if sameRow(r, fields) {
			return i
		}
	}
	return -1
}
