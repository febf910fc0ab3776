package format

import (
	"fmt"
	"math/big"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

// Avro schema resolution (the specification's "Schema Resolution"): a
// message written with one schema (the writer's, found by its registry id)
// is read as the table's row, whose schema is the reader's. Fields match by
// name; a writer field the reader lacks is skipped; a reader field the
// writer lacks takes the reader schema's default (NULL for a nullable
// column of a schema derived from the table), and without one the schemas
// do not resolve. Numbers widen as the specification allows (int → long →
// float → double), string and bytes read as each other, an enum reads as a
// string, a writer's union resolves branch by branch.

// avroDecoder reads one value of the writer's schema as a table value.
type avroDecoder func(r *avro.Reader) (any, error)

// resolveRecord compiles the reader of a writer record into the table's
// fields; reader is the reader schema's record (for its defaults).
func resolveRecord(w *avro.RecordSchema, reader *avro.RecordSchema, fields []types.Field, path string) (avroDecoder, error) {
	type step struct {
		to  int // index in fields, -1 to skip
		dec avroDecoder
	}
	var steps []step
	seen := make([]bool, len(fields))
	for _, wf := range w.Fields() {
		i := fieldIndex(fields, wf.Name())
		if i < 0 {
			steps = append(steps, step{to: -1, dec: skipField(wf, path)})
			continue
		}
		seen[i] = true
		var rf avro.Schema
		if reader != nil {
			rf = readerField(reader, wf.Name())
		}
		dec, err := resolve(wf.Type(), rf, fields[i].Type, path+fields[i].Name)
		if err != nil {
			return nil, err
		}
		steps = append(steps, step{to: i, dec: dec})
	}
	defaults := make([]any, len(fields))
	for i, f := range fields {
		if seen[i] {
			continue
		}
		v, err := fieldDefault(reader, f, path)
		if err != nil {
			return nil, err
		}
		defaults[i] = v
	}
	return func(r *avro.Reader) (any, error) {
		row := append([]any(nil), defaults...)
		for _, s := range steps {
			v, err := s.dec(r)
			if err != nil {
				return nil, err
			}
			if s.to >= 0 {
				row[s.to] = v
			}
		}
		return row, nil
	}, nil
}

// skipField reads past a writer's field the table does not have.
func skipField(wf *avro.Field, path string) avroDecoder {
	ws := wf.Type()
	return func(r *avro.Reader) (any, error) {
		if r.ReadNext(ws); r.Error != nil {
			return nil, &Error{Format: "avro", Err: fmt.Errorf("skipping the writer's field %q (%s): %v", path+wf.Name(), ws, r.Error)}
		}
		return nil, nil
	}
}

// typed makes err, unless it is one already, an *Error at the column.
func typed(err error, path string, t types.Type) error {
	if _, ok := err.(*Error); ok || err == nil {
		return err
	}
	return avroError(path, t, err)
}

func fieldIndex(fields []types.Field, name string) int {
	for i, f := range fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

func readerField(rec *avro.RecordSchema, name string) avro.Schema {
	for _, f := range rec.Fields() {
		if f.Name() == name {
			return f.Type()
		}
	}
	return nil
}

// fieldDefault is the value of reader field f when the writer lacks it.
func fieldDefault(reader *avro.RecordSchema, f types.Field, path string) (any, error) {
	if reader != nil {
		for _, rf := range reader.Fields() {
			if rf.Name() == f.Name && rf.HasDefault() {
				v, err := defaultValue(rf.Default(), f.Type)
				if err != nil {
					return nil, fmt.Errorf("column %q: the reader schema's default %v: %v", path+f.Name, rf.Default(), err)
				}
				return v, nil
			}
		}
	}
	return nil, fmt.Errorf("column %q is not in the writer's schema and the reader's schema gives it no default "+
		"(declare the column nullable, or give it a default in 'avro-confluent.schema')", path+f.Name)
}

// defaultValue converts a default as hamba/avro parses it to the column's
// value.
func defaultValue(v any, t types.Type) (any, error) {
	if v == nil {
		if !t.Nullable {
			return nil, fmt.Errorf("null for a NOT NULL column")
		}
		return nil, nil
	}
	switch x := v.(type) {
	case string:
		if t.Kind == types.Bytes {
			return []byte(x), nil
		}
		return ParseScalar(x, t)
	case []byte:
		if t.Kind == types.Bytes {
			return x, nil
		}
		return ParseScalar(string(x), t)
	case bool:
		if t.Kind == types.Boolean {
			return x, nil
		}
	case int, int32, int64, float32, float64:
		return ParseScalar(fmt.Sprint(x), t)
	}
	return nil, fmt.Errorf("a %T default is not supported for %s", v, t)
}

// resolve compiles the reader of a writer's value of schema w as a value
// of type t; rs is the reader's schema of it, for record defaults (nil
// without one).
func resolve(w, rs avro.Schema, t types.Type, path string) (avroDecoder, error) {
	if ref, ok := w.(*avro.RefSchema); ok {
		w = ref.Schema()
	}
	rs = nonNullBranch(rs)
	switch w.Type() {
	case avro.Union:
		return resolveUnion(w.(*avro.UnionSchema), rs, t, path)
	case avro.Null:
		if !t.Nullable {
			return nil, fmt.Errorf("column %q: the writer's schema has null where the column is NOT NULL", path)
		}
		return func(*avro.Reader) (any, error) { return nil, nil }, nil
	case avro.Record:
		if t.Kind != types.Row {
			return nil, mismatch(w, t, path)
		}
		rec, _ := rs.(*avro.RecordSchema)
		return resolveRecord(w.(*avro.RecordSchema), rec, t.Fields, path+".")
	case avro.Array:
		return resolveArray(w.(*avro.ArraySchema), rs, t, path)
	case avro.Map:
		return resolveMap(w.(*avro.MapSchema), rs, t, path)
	}
	dec := resolveScalar(w, t)
	if dec == nil {
		return nil, mismatch(w, t, path)
	}
	return func(r *avro.Reader) (any, error) {
		v, err := dec(r)
		if err == nil && r.Error != nil {
			err = r.Error
		}
		if err != nil {
			return nil, avroError(path, t, err)
		}
		return v, nil
	}, nil
}

func mismatch(w avro.Schema, t types.Type, path string) error {
	return fmt.Errorf("column %q (%s) cannot be read from the writer's %s", path, t, w)
}

// nonNullBranch is the reader schema without its ["null", T] union.
func nonNullBranch(s avro.Schema) avro.Schema {
	if u, ok := s.(*avro.UnionSchema); ok && u.Nullable() {
		_, i := u.Indices()
		s = u.Types()[i]
	}
	if ref, ok := s.(*avro.RefSchema); ok {
		return ref.Schema()
	}
	return s
}

// resolveUnion reads a writer's union: each branch is resolved against the
// column; a branch that does not resolve fails the message that uses it,
// not the schema (the specification's rule).
func resolveUnion(u *avro.UnionSchema, rs avro.Schema, t types.Type, path string) (avroDecoder, error) {
	branches := make([]avroDecoder, len(u.Types()))
	errs := make([]error, len(u.Types()))
	for i, b := range u.Types() {
		branches[i], errs[i] = resolve(b, rs, t, path)
	}
	return func(r *avro.Reader) (any, error) {
		i := r.ReadLong()
		if r.Error != nil {
			return nil, avroError(path, t, r.Error)
		}
		if i < 0 || int(i) >= len(branches) {
			return nil, avroError(path, t, fmt.Errorf("union index %d: the writer's union has %d branches", i, len(branches)))
		}
		if errs[i] != nil {
			return nil, &Error{Format: "avro", Err: fmt.Errorf("union branch %d: %w", i, errs[i])}
		}
		return branches[i](r)
	}, nil
}

func resolveArray(w *avro.ArraySchema, rs avro.Schema, t types.Type, path string) (avroDecoder, error) {
	if t.Kind != types.Array {
		return nil, mismatch(w, t, path)
	}
	var ri avro.Schema
	if a, ok := rs.(*avro.ArraySchema); ok {
		ri = a.Items()
	}
	item, err := resolve(w.Items(), ri, *t.Elem, path+"[]")
	if err != nil {
		return nil, err
	}
	return func(r *avro.Reader) (any, error) {
		out := []any{}
		err := readBlocks(r, func() error {
			v, err := item(r)
			out = append(out, v)
			return err
		})
		return out, typed(err, path, t)
	}, nil
}

func resolveMap(w *avro.MapSchema, rs avro.Schema, t types.Type, path string) (avroDecoder, error) {
	if t.Kind != types.Map {
		return nil, mismatch(w, t, path)
	}
	var rv avro.Schema
	if m, ok := rs.(*avro.MapSchema); ok {
		rv = m.Values()
	}
	val, err := resolve(w.Values(), rv, *t.Elem, path+"[]")
	if err != nil {
		return nil, err
	}
	return func(r *avro.Reader) (any, error) {
		out := map[any]any{}
		err := readBlocks(r, func() error {
			k := r.ReadString()
			v, err := val(r)
			out[k] = v
			return err
		})
		return out, typed(err, path, t)
	}, nil
}

// resolveScalar reads a writer's primitive, logical, enum or fixed value
// as a scalar of type t; nil when the writer's type does not promote to it.
func resolveScalar(w avro.Schema, t types.Type) func(r *avro.Reader) (any, error) {
	if l := logicalOf(w); l != nil {
		return resolveLogical(w, l, t)
	}
	switch w.Type() {
	case avro.Boolean:
		return kindIs(t, func(r *avro.Reader) (any, error) { return r.ReadBool(), nil }, types.Boolean)
	case avro.Int:
		return resolveInt(t)
	case avro.Long:
		return resolveLong(t)
	case avro.Float:
		return kindIs(t, func(r *avro.Reader) (any, error) { return float64(r.ReadFloat()), nil }, types.Float, types.Double)
	case avro.Double:
		return kindIs(t, func(r *avro.Reader) (any, error) { return r.ReadDouble(), nil }, types.Double)
	case avro.String, avro.Bytes:
		return resolveText(t)
	case avro.Enum:
		e := w.(*avro.EnumSchema)
		return kindIs(t, func(r *avro.Reader) (any, error) {
			i := int(r.ReadInt())
			if s, ok := e.Symbol(i); ok {
				return s, nil
			}
			return nil, fmt.Errorf("enum index %d: the writer's enum %s has %d symbols", i, e.FullName(), len(e.Symbols()))
		}, types.Char, types.Varchar, types.String)
	case avro.Fixed:
		n := w.(*avro.FixedSchema).Size()
		return kindIs(t, func(r *avro.Reader) (any, error) {
			b := make([]byte, n)
			r.Read(b)
			return b, nil
		}, types.Bytes)
	}
	return nil
}

func kindIs(t types.Type, dec func(r *avro.Reader) (any, error), kinds ...types.Kind) func(r *avro.Reader) (any, error) {
	for _, k := range kinds {
		if t.Kind == k {
			return dec
		}
	}
	return nil
}

func resolveInt(t types.Type) func(r *avro.Reader) (any, error) {
	switch t.Kind {
	case types.TinyInt, types.SmallInt, types.Int:
		return func(r *avro.Reader) (any, error) { return fitInteger(int64(r.ReadInt()), t.Kind) }
	case types.BigInt:
		return func(r *avro.Reader) (any, error) { return int64(r.ReadInt()), nil }
	case types.Float, types.Double:
		return func(r *avro.Reader) (any, error) { return float64(r.ReadInt()), nil }
	}
	return nil
}

func resolveLong(t types.Type) func(r *avro.Reader) (any, error) {
	switch t.Kind {
	case types.BigInt:
		return func(r *avro.Reader) (any, error) { return r.ReadLong(), nil }
	case types.Float, types.Double:
		return func(r *avro.Reader) (any, error) { return float64(r.ReadLong()), nil }
	}
	return nil
}

func resolveText(t types.Type) func(r *avro.Reader) (any, error) {
	switch t.Kind {
	case types.Char, types.Varchar, types.String:
		return func(r *avro.Reader) (any, error) { return string(r.ReadBytes()), nil }
	case types.Bytes:
		return func(r *avro.Reader) (any, error) { return append([]byte(nil), r.ReadBytes()...), nil }
	}
	return nil
}

func logicalOf(s avro.Schema) avro.LogicalSchema {
	if l, ok := s.(avro.LogicalTypeSchema); ok {
		return l.Logical()
	}
	return nil
}

// resolveLogical reads a date, timestamp or decimal; another logical type
// reads as its underlying type (a uuid string as STRING).
func resolveLogical(w avro.Schema, l avro.LogicalSchema, t types.Type) func(r *avro.Reader) (any, error) {
	switch l.Type() {
	case avro.Date:
		return kindIs(t, func(r *avro.Reader) (any, error) { return time.Unix(int64(r.ReadInt())*86400, 0).UTC(), nil }, types.Date)
	case avro.TimestampMillis, avro.LocalTimestampMillis:
		return kindIs(t, func(r *avro.Reader) (any, error) { return time.UnixMilli(r.ReadLong()).UTC(), nil }, types.Timestamp, types.TimestampLTZ)
	case avro.TimestampMicros, avro.LocalTimestampMicros:
		return kindIs(t, func(r *avro.Reader) (any, error) { return time.UnixMicro(r.ReadLong()).UTC(), nil }, types.Timestamp, types.TimestampLTZ)
	case avro.Decimal:
		if t.Kind != types.Decimal {
			return nil
		}
		scale := l.(*avro.DecimalLogicalSchema).Scale()
		read := func(r *avro.Reader) []byte { return r.ReadBytes() }
		if f, ok := w.(*avro.FixedSchema); ok {
			read = func(r *avro.Reader) []byte { b := make([]byte, f.Size()); r.Read(b); return b }
		}
		return func(r *avro.Reader) (any, error) { return rescaleDecimal(read(r), scale, t) }
	}
	switch w.Type() {
	case avro.Int:
		return resolveInt(t)
	case avro.Long:
		return resolveLong(t)
	case avro.String, avro.Bytes:
		return resolveText(t)
	}
	return nil
}

// rescaleDecimal reads an unscaled value of the writer's scale as a
// DECIMAL(p, s): rounded HALF_UP to s, an error when it has more than p
// digits.
func rescaleDecimal(b []byte, scale int, t types.Type) (any, error) {
	d := decimal.NewFromBigInt(fromTwosComplement(b), -int32(scale))
	if scale != t.Scale {
		d = d.Round(int32(t.Scale))
	}
	c := d.Coefficient()
	if digits := len(new(big.Int).Abs(c).String()); c.Sign() != 0 && digits > t.Precision {
		return nil, fmt.Errorf("%s has %d digits, more than the precision %d", FormatDecimal(d), digits, t.Precision)
	}
	return d, nil
}
