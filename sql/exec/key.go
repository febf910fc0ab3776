package exec

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// KeyFunc extracts the key of a row: the state and timers of a keyed SQL
// operator are scoped to it, and the exchange before the operator
// partitions by it.
//
// Keys are plain strings, not a named type, on purpose: the keyed
// backends' key codec (state.AnyCodec) and keygroup.HashKey handle string
// natively and fast, where a named type would go through gob and %#v.
type KeyFunc func(fields []any) string

// FieldKey returns the KeyFunc of a row's fields at idx: RowKey of them.
// No fields give the single key "" (a global aggregate).
func FieldKey(idx ...int) KeyFunc {
	idx = append([]int(nil), idx...)
	return func(fields []any) string { return RowKey(fields, idx) }
}

// RowKey encodes the values of fields at idx as a key. Values SQL calls
// equal give equal keys (1.5 and 1.50, int and int64 1, NULL and NULL),
// so both sides of a join on a DECIMAL(10, 1) and a DECIMAL(10, 2) column
// meet. The string is binary, not for display.
func RowKey(fields []any, idx []int) string {
	var scratch [64]byte // most keys fit: the string is then the one allocation
	buf, n := scalarKey(scratch[:0], fields, idx)
	if n < len(idx) {
		return rowKeyOnHeap(buf, fields, idx[n:])
	}
	return string(buf)
}

// scalarKey appends to buf the key of the fields at idx up to the first
// that appendScalar cannot encode in place, and returns how many it
// encoded (len(idx): all).
func scalarKey(buf []byte, fields []any, idx []int) ([]byte, int) {
	for n, i := range idx {
		var ok bool
		if buf, ok = appendScalar(buf, fields[i], true); !ok {
			return buf, n
		}
	}
	return buf, len(idx)
}

// rowKeyOnHeap is RowKey of the fields at idx after the key's prefix, in
// a buffer of its own: appendValue's buffer escapes.
func rowKeyOnHeap(prefix []byte, fields []any, idx []int) string {
	buf := append([]byte(nil), prefix...)
	for _, i := range idx {
		buf = appendValue(buf, fields[i], true)
	}
	return string(buf)
}

// nullKeyUnsafe is nullKey over the key fields not marked null-safe (IS
// NOT DISTINCT FROM, where NULL matches NULL); nullSafe may be nil.
func nullKeyUnsafe(fields []any, idx []int, nullSafe []bool) bool {
	for i, f := range idx {
		if fields[f] == nil && (i >= len(nullSafe) || !nullSafe[i]) {
			return true
		}
	}
	return false
}

// nullKey reports whether any of the fields at idx is NULL: such a row
// matches nothing in an equi-join, as SQL has NULL = x unknown.
func nullKey(fields []any, idx []int) bool {
	for _, i := range idx {
		if fields[i] == nil {
			return true
		}
	}
	return false
}

// Selector adapts f to the runtime's operator.KeySelector over records
// whose values are event.Rows. The planner gives it to the graph node and
// the hash edge in front of the operator, so rows arrive at the subtask
// that owns their key group.
func (f KeyFunc) Selector() operator.KeySelector {
	return func(v any) any { return f(selected(v).Fields) }
}

// KeyOf is a hash exchange's key (see Selector): the operator.KeySelector,
// and the operator.KeyHasher the exchange partitions by.
type KeyOf struct {
	Key  operator.KeySelector
	Hash operator.KeyHasher
}

// Of returns f's KeyOf; its hash makes the key but does not box it.
func (f KeyFunc) Of() KeyOf {
	return KeyOf{Key: f.Selector(), Hash: func(v any) uint64 { return keygroup.HashString(f(selected(v).Fields)) }}
}

// FieldKeyOf returns FieldKey(idx...)'s KeyOf, whose hash reads the key
// in a buffer on the stack for most keys (RowKeyHash): a row crossing a
// hash exchange allocated its key and the key's box, only to hash them.
func FieldKeyOf(idx ...int) KeyOf {
	idx = append([]int(nil), idx...)
	return KeyOf{Key: FieldKey(idx...).Selector(), Hash: func(v any) uint64 { return RowKeyHash(selected(v).Fields, idx) }}
}

// RowKeyHash is keygroup.HashKey(RowKey(fields, idx)), the key made on
// the heap only when it outgrows RowKey's buffer.
func RowKeyHash(fields []any, idx []int) uint64 {
	var scratch [64]byte
	buf, n := scalarKey(scratch[:0], fields, idx)
	if n < len(idx) {
		return keygroup.HashString(rowKeyOnHeap(buf, fields, idx[n:]))
	}
	return keygroup.HashBytes(buf)
}

// selected is the row a key selector is given.
func selected(v any) event.Row {
	r, ok := v.(event.Row)
	if !ok {
		panic(fmt.Sprintf("sql/exec: key selector given a %T, want event.Row", v))
	}
	return r
}

// rowOf returns the row a record carries.
func rowOf(v any) (event.Row, error) {
	switch r := v.(type) {
	case event.Row:
		return r, nil
	case *event.Row:
		return *r, nil
	}
	return event.Row{}, fmt.Errorf("%w: got a %T", ErrNotRow, v)
}

// setKey makes k the current key of the keyed backend. A key that is
// current already stays (rows of one key often come together): no hash
// of its key group, no new box of it. A new key's group is hashed from
// the string (keygroup.HashString, ForKey's hash of a string): ForKey
// would box it once more.
func setKey(ctx *operator.Context, k string) {
	if cur, ok := ctx.Keyed.CurrentKey().(string); ok && cur == k {
		return
	}
	ctx.Keyed.SetCurrentKey(k, keygroup.ForHash(keygroup.HashString(k), ctx.MaxParallelism))
}

// ttlConfig turns table.exec.state.ttl into a descriptor's TTL: nil (no
// TTL) for 0.
func ttlConfig(ttl time.Duration) *state.TTLConfig {
	if ttl <= 0 {
		return nil
	}
	return &state.TTLConfig{TTL: ttl}
}

func checkTTL(ttl time.Duration) error {
	if ttl < 0 || (ttl > 0 && ttl < time.Millisecond) {
		return fmt.Errorf("%w: StateTTL (table.exec.state.ttl) is %v; use 0 (keep state forever) or at least 1ms", ErrInvalidOptions, ttl)
	}
	return nil
}

// emit sends a row of kind on ctx's main output.
func emit(ctx *operator.Context, kind event.RowKind, fields []any, ts event.Timestamp) {
	ctx.Output.Collect(event.Record{Value: event.Row{Kind: kind, Fields: fields}, Timestamp: ts})
}

// emitRow sends r, made by event.NewRow, on ctx's main output, boxed in
// place; r must not change afterwards.
func emitRow(ctx *operator.Context, r *event.Row, ts event.Timestamp) {
	ctx.Output.Collect(event.Record{Value: event.BoxRow(r), Timestamp: ts})
}

// concatRow is a new row of kind with a's then b's fields, allocated with
// its header (event.NewRow).
func concatRow(kind event.RowKind, a, b []any) *event.Row {
	r := event.NewRow(kind, len(a)+len(b))
	copy(r.Fields[copy(r.Fields, a):], b)
	return r
}

// concat returns a new slice of a's then b's elements.
func concat(a, b []any) []any {
	out := make([]any, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}

// nulls returns n NULLs.
func nulls(n int) []any { return make([]any, n) }

// pick returns the fields at idx.
func pick(fields []any, idx []int) []any {
	out := make([]any, len(idx))
	for i, j := range idx {
		out[i] = fields[j]
	}
	return out
}

func checkFields(name string, idx []int, width int) error {
	for _, i := range idx {
		if i < 0 || (width > 0 && i >= width) {
			return fmt.Errorf("%w: %s has field index %d out of range", ErrInvalidOptions, name, i)
		}
	}
	return nil
}

// checkWidth makes sure row has every field idx names.
func checkWidth(op string, fields []any, idx ...int) error {
	for _, i := range idx {
		if i >= len(fields) {
			return fmt.Errorf("%w: %s reads field %d of a row of %d fields", ErrType, op, i, len(fields))
		}
	}
	return nil
}

// concatInts returns a new slice of a's elements, then b.
func concatInts(a []int, b ...int) []int {
	return append(append(make([]int, 0, len(a)+len(b)), a...), b...)
}

// pickOwned is pick for values kept in state as long as their key lives:
// a value boxed inside a larger block (a source's event, whose fields
// share one allocation) is boxed afresh, so the key does not keep the
// whole event alive, and what the collector marks at every cycle is one
// small box, not the event and the strings it points to.
func pickOwned(fields []any, idx []int) []any {
	out := make([]any, len(idx))
	for i, j := range idx {
		out[i] = rebox(fields[j])
	}
	return out
}

// rebox returns v in a box of its own (see pickOwned), for the scalar
// types a source boxes inside its event's block; any other value as it is.
func rebox(v any) any {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		return x
	case time.Time:
		return x
	case int32:
		return x
	case float64:
		return x
	}
	return v
}
