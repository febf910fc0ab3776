package format

import (
	"fmt"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/types"
)

// DebeziumAvro is Flink's debezium-avro-confluent format: Debezium's change
// events as Kafka Connect's Avro converter writes them, in the Confluent
// wire format (see AvroConfluent). The table's schema is the envelope
// Flink derives — a record of before and after (the table's row, each
// nullable) and op (a nullable string) — and is what Encode registers; a
// Debezium writer's envelope (with its source, ts_ms and transaction
// fields, and its own record names) resolves to it field by field, the
// fields the table lacks skipped. Its options are those of avro-confluent
// under 'debezium-avro-confluent.': url, subject, schema, basic-auth.*,
// bearer-auth.*.
type DebeziumAvro struct {
	env *AvroConfluent
}

const debeziumAvroName = "debezium-avro-confluent"

func newDebeziumAvro(fields []types.Field, opts map[string]string) (*DebeziumAvro, error) {
	row := types.Type{Kind: types.Row, Nullable: true, Fields: fields}
	env := []types.Field{{Name: "before", Type: row}, {Name: "after", Type: row},
		{Name: "op", Type: types.Type{Kind: types.String, Nullable: true}}}
	a, err := newAvroConfluent(debeziumAvroName, env, opts)
	if err != nil {
		return nil, err
	}
	return &DebeziumAvro{env: a}, nil
}

// DecodeChanges implements Changelog: c and r are +I of after, u is -U of
// before and +U of after, d is -D of before; a tombstone (an empty
// message) gives no rows.
func (d *DebeziumAvro) DecodeChanges(data []byte) ([]event.Row, error) {
	if len(data) == 0 {
		return nil, nil
	}
	env, err := d.env.Decode(data)
	if err != nil {
		return nil, err
	}
	before, _ := env[0].([]any)
	after, _ := env[1].([]any)
	op, _ := env[2].(string)
	need := func(row []any, field string) error {
		if row == nil {
			return &Error{Format: debeziumAvroName, Err: fmt.Errorf("op %q without %q (for updates and deletes the "+
				"source table must log whole old rows: REPLICA IDENTITY FULL in PostgreSQL)", op, field)}
		}
		return nil
	}
	switch op {
	case "c", "r":
		if err := need(after, "after"); err != nil {
			return nil, err
		}
		return []event.Row{{Kind: event.Insert, Fields: after}}, nil
	case "u":
		if err := need(before, "before"); err != nil {
			return nil, err
		}
		if err := need(after, "after"); err != nil {
			return nil, err
		}
		return []event.Row{{Kind: event.UpdateBefore, Fields: before}, {Kind: event.UpdateAfter, Fields: after}}, nil
	case "d":
		if err := need(before, "before"); err != nil {
			return nil, err
		}
		return []event.Row{{Kind: event.Delete, Fields: before}}, nil
	}
	return nil, &Error{Format: debeziumAvroName, Err: fmt.Errorf("unknown op %q: Debezium writes c, r, u or d", op)}
}

// EncodeChange implements Changelog as Flink's serializer: +I and +U as
// an insert (after, op c), -U and -D as a delete (before, op d).
func (d *DebeziumAvro) EncodeChange(r event.Row) ([]byte, error) {
	if r.Kind == event.Insert || r.Kind == event.UpdateAfter {
		return d.env.Encode([]any{nil, r.Fields, "c"})
	}
	return d.env.Encode([]any{r.Fields, nil, "d"})
}

// Schema is the envelope's schema Encode registers, as JSON.
func (d *DebeziumAvro) Schema() string { return d.env.Schema() }
