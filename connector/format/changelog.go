package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/types"
)

// Changelog is a changelog-data-capture format (Flink's debezium-json,
// canal-json, maxwell-json and debezium-avro-confluent): a message carries changes, so it decodes
// into zero or more rows, each with its RowKind, and a row of any kind
// encodes into one message.
type Changelog interface {
	// DecodeChanges reads one message. An empty message (a Kafka
	// tombstone, which Debezium writes after a delete for log compaction)
	// gives no rows, as in Flink.
	DecodeChanges(data []byte) ([]event.Row, error)
	// EncodeChange writes one row as Flink's serializer of the format
	// does: +I and +U as an insert, -U and -D as a delete.
	EncodeChange(r event.Row) ([]byte, error)
}

// changelogFormats are the JSON formats NewChangelog makes; it makes
// debezium-avro-confluent too (DebeziumAvro).
var changelogFormats = []string{"debezium-json", "canal-json", "maxwell-json"}

// IsChangelog tells whether name is a changelog format: a table in it is
// an updating source (its rows are +I/-U/+U/-D), and takes updating
// results as a sink.
func IsChangelog(name string) bool {
	if strings.EqualFold(name, debeziumAvroName) {
		return true
	}
	for _, f := range changelogFormats {
		if strings.EqualFold(name, f) {
			return true
		}
	}
	return false
}

// NewChangelog returns the changelog format name for the table's physical
// fields, configured with Flink's options ('debezium-json.schema-include',
// 'canal-json.table.include', '<format>.encode.decimal-as-plain-number').
// '<format>.ignore-parse-errors' is the connector's (IgnoreParseErrors).
func NewChangelog(name string, fields []types.Field, opts map[string]string) (Changelog, error) {
	name = strings.ToLower(name)
	if !IsChangelog(name) {
		return nil, fmt.Errorf("unknown changelog format %q: supported are %s, %s", name, strings.Join(changelogFormats, ", "), debeziumAvroName)
	}
	if name == debeziumAvroName {
		d, err := newDebeziumAvro(fields, opts)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	plain, err := boolOption(opts, name+".encode.decimal-as-plain-number", false)
	if err != nil {
		return nil, err
	}
	c := cdc{name: name, fields: fields, json: &JSON{Fields: fields, PlainDecimals: plain}}
	switch name {
	case "debezium-json":
		d := &Debezium{cdc: c}
		if d.SchemaInclude, err = boolOption(opts, "debezium-json.schema-include", false); err != nil {
			return nil, err
		}
		return d, nil
	case "canal-json":
		cj := &Canal{cdc: c}
		if cj.Database, err = includePattern(opts, "canal-json.database.include"); err != nil {
			return nil, err
		}
		if cj.Table, err = includePattern(opts, "canal-json.table.include"); err != nil {
			return nil, err
		}
		return cj, nil
	}
	return &Maxwell{cdc: c}, nil
}

// includePattern compiles a Java regular expression option that must match
// a whole name (Pattern.matches), nil when the option is not set.
func includePattern(opts map[string]string, key string) (*regexp.Regexp, error) {
	v, ok := opts[key]
	if !ok {
		return nil, nil
	}
	re, err := regexp.Compile(`^(?:` + v + `)$`)
	if err != nil {
		return nil, fmt.Errorf("format canal-json: '%s' = '%s' is not a regular expression: %v", key, v, err)
	}
	return re, nil
}

// cdc is what the three formats share: the table's fields and a json
// format to read and write one row object.
type cdc struct {
	name   string
	fields []types.Field
	json   *JSON
}

// parse reads a message as a JSON object; nil, nil for an empty message.
func (c *cdc) parse(data []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, c.errorf("not a JSON object: %v", err)
	}
	if obj == nil {
		return nil, c.errorf("the message is JSON null, not an object")
	}
	return obj, nil
}

func (c *cdc) errorf(f string, args ...any) error {
	return &Error{Format: c.name, Err: fmt.Errorf(f, args...)}
}

// rowOf reads the object at obj[key] (named path in errors) as a row of
// the table; ok is false when the key is missing or null.
func (c *cdc) rowOf(v any, path string) (row []any, ok bool, err error) {
	if v == nil {
		return nil, false, nil
	}
	o, isObj := v.(map[string]any)
	if !isObj {
		return nil, false, c.errorf("%q must be an object, got %s", path, jsonKind(v))
	}
	row, err = decodeFields(o, c.fields, path+".")
	return row, true, c.rename(err)
}

// rename makes a json field error this format's: it names the field by
// its path in the message ("after.amount").
func (c *cdc) rename(err error) error {
	var fe *Error
	if errors.As(err, &fe) {
		fe.Format = c.name
	}
	return err
}

// beforeOf is the row before an update in canal-json and maxwell-json:
// the row after, with the fields that "old" lists set to their old value
// (a field missing from "old" did not change; one set to null was NULL).
func (c *cdc) beforeOf(after []any, old any, path string) ([]any, error) {
	o, ok := old.(map[string]any)
	if !ok {
		return nil, c.errorf("%q of an update must be an object, got %s", path, jsonKindOrNull(old))
	}
	before := append([]any(nil), after...)
	for i, f := range c.fields {
		v, changed := o[f.Name]
		if !changed {
			continue
		}
		var err error
		if before[i], err = fromJSON(v, f.Type, path+"."+f.Name); err != nil {
			return nil, c.rename(err)
		}
	}
	return before, nil
}

func jsonKindOrNull(v any) string {
	if v == nil {
		return "null"
	}
	return jsonKind(v)
}

// object writes "key":{row} (or "key":null).
func (c *cdc) object(buf *bytes.Buffer, key string, row []any) error {
	fmt.Fprintf(buf, "%q:", key)
	if row == nil {
		buf.WriteString("null")
		return nil
	}
	return c.json.encodeObject(buf, row, c.fields)
}

func stringField(buf *bytes.Buffer, key, value string) {
	fmt.Fprintf(buf, "%q:%q", key, value)
}

// endWithType ends a canal-json or maxwell-json message with its "type":
// insert for +I/+U, del for -U/-D.
func endWithType(buf *bytes.Buffer, r event.Row, insert, del string) []byte {
	typ := del
	if isInsert(r) {
		typ = insert
	}
	stringField(buf, "type", typ)
	buf.WriteByte('}')
	return buf.Bytes()
}

// isInsert tells whether Flink's changelog serializers write r as an
// insert (+I, +U) or as a delete (-U, -D).
func isInsert(r event.Row) bool { return r.Kind.IsAccumulate() }

// Debezium is Flink's debezium-json format: a Debezium change event
// {"before":…,"after":…,"op":…} — inside {"schema":…,"payload":…} when
// Kafka Connect's JsonConverter has schemas.enable (SchemaInclude, Flink's
// 'debezium-json.schema-include'). op c (create) and r (read, a snapshot
// row) are +I[after], u is -U[before] +U[after], d is -D[before].
type Debezium struct {
	cdc
	SchemaInclude bool
}

// DecodeChanges implements Changelog.
func (d *Debezium) DecodeChanges(data []byte) ([]event.Row, error) {
	obj, err := d.parse(data)
	if obj == nil || err != nil {
		return nil, err
	}
	payload, err := d.payload(obj)
	if err != nil {
		return nil, err
	}
	op, _ := payload["op"].(string)
	switch op {
	case "c", "r":
		return d.one(event.Insert, payload, "after")
	case "d":
		return d.one(event.Delete, payload, "before")
	case "u":
		before, err := d.one(event.UpdateBefore, payload, "before")
		if err != nil {
			return nil, err
		}
		after, err := d.one(event.UpdateAfter, payload, "after")
		return append(before, after...), err
	case "":
		if _, ok := payload["op"]; !ok {
			return nil, d.errorf(`the message has no "op"%s`, d.schemaHint(obj))
		}
	}
	return nil, d.errorf(`unknown "op" value %s: want c, r, u or d`, jsonText(payload["op"]))
}

// payload is the change event: obj itself, or its "payload" with
// SchemaInclude.
func (d *Debezium) payload(obj map[string]any) (map[string]any, error) {
	if !d.SchemaInclude {
		return obj, nil
	}
	p, ok := obj["payload"].(map[string]any)
	if !ok {
		return nil, d.errorf(`'debezium-json.schema-include' = 'true' but the message has no "payload" object: ` +
			`set it to 'false' when Kafka Connect writes without schemas`)
	}
	return p, nil
}

// schemaHint suggests 'debezium-json.schema-include' when a message
// without "op" has the schema envelope.
func (d *Debezium) schemaHint(obj map[string]any) string {
	_, s := obj["schema"]
	_, p := obj["payload"]
	if !d.SchemaInclude && s && p {
		return ` (it has "schema" and "payload": set 'debezium-json.schema-include' = 'true')`
	}
	return ""
}

// one reads the row under key as one row of kind k; a missing row is an
// error (a -U/-D without "before" is what a PostgreSQL table without
// REPLICA IDENTITY FULL gives).
func (d *Debezium) one(k event.RowKind, payload map[string]any, key string) ([]event.Row, error) {
	row, ok, err := d.rowOf(payload[key], key)
	if err != nil {
		return nil, err
	}
	if !ok {
		hint := ""
		if key == "before" {
			hint = " (from Debezium's PostgreSQL connector, set REPLICA IDENTITY FULL on the table)"
		}
		return nil, d.errorf(`the %q of an op %q event is null or missing%s`, key, payload["op"], hint)
	}
	return []event.Row{{Kind: k, Fields: row}}, nil
}

// EncodeChange implements Changelog: as Flink's
// DebeziumJsonSerializationSchema, {"before":null,"after":{…},"op":"c"}
// for +I/+U and {"before":{…},"after":null,"op":"d"} for -U/-D (no
// schema envelope: Flink refuses 'debezium-json.schema-include' on write).
func (d *Debezium) EncodeChange(r event.Row) ([]byte, error) {
	var buf bytes.Buffer
	before, after, op := r.Fields, []any(nil), "d"
	if isInsert(r) {
		before, after, op = nil, r.Fields, "c"
	}
	buf.WriteByte('{')
	if err := d.object(&buf, "before", before); err != nil {
		return nil, err
	}
	buf.WriteByte(',')
	if err := d.object(&buf, "after", after); err != nil {
		return nil, err
	}
	buf.WriteByte(',')
	stringField(&buf, "op", op)
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// jsonText writes a decoded JSON value back as JSON, for errors.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Canal is Flink's canal-json format: {"data":[…],"old":[…],"type":…,
// "database":…,"table":…}. INSERT is +I per element of data, DELETE -D per
// element, UPDATE -U/+U per element with the row before made of data[i]
// and the fields old[i] lists; CREATE (a DDL event, isDdl true) is
// skipped. Database and Table (Flink's 'canal-json.database.include' and
// 'canal-json.table.include') keep only the events of matching names.
type Canal struct {
	cdc
	Database, Table *regexp.Regexp
}

// DecodeChanges implements Changelog.
func (c *Canal) DecodeChanges(data []byte) ([]event.Row, error) {
	obj, err := c.parse(data)
	if obj == nil || err != nil || !c.included(obj) {
		return nil, err
	}
	typ, _ := obj["type"].(string)
	switch typ {
	case "INSERT":
		return c.each(obj, event.Insert)
	case "DELETE":
		return c.each(obj, event.Delete)
	case "UPDATE":
		return c.updates(obj)
	case "CREATE":
		return nil, nil
	}
	return nil, c.errorf(`unknown "type" value %s: want INSERT, UPDATE, DELETE or CREATE`, jsonText(obj["type"]))
}

// included applies the database and table filters.
func (c *Canal) included(obj map[string]any) bool {
	db, _ := obj["database"].(string)
	table, _ := obj["table"].(string)
	return (c.Database == nil || c.Database.MatchString(db)) && (c.Table == nil || c.Table.MatchString(table))
}

// data returns the "data" array.
func (c *Canal) data(obj map[string]any) ([]any, error) {
	arr, ok := obj["data"].([]any)
	if !ok {
		return nil, c.errorf(`"data" of a %s event must be an array, got %s`, obj["type"], jsonKindOrNull(obj["data"]))
	}
	return arr, nil
}

func (c *Canal) each(obj map[string]any, k event.RowKind) ([]event.Row, error) {
	arr, err := c.data(obj)
	if err != nil {
		return nil, err
	}
	out := make([]event.Row, 0, len(arr))
	for i, v := range arr {
		row, ok, err := c.rowOf(v, fmt.Sprintf("data[%d]", i))
		if err == nil && !ok {
			err = c.errorf("data[%d] is null", i)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, event.Row{Kind: k, Fields: row})
	}
	return out, nil
}

func (c *Canal) updates(obj map[string]any) ([]event.Row, error) {
	after, err := c.each(obj, event.UpdateAfter)
	if err != nil {
		return nil, err
	}
	old, ok := obj["old"].([]any)
	if !ok || len(old) != len(after) {
		return nil, c.errorf(`"old" of an UPDATE event must be an array as long as "data" (%d), got %s`, len(after), jsonKindOrNull(obj["old"]))
	}
	out := make([]event.Row, 0, 2*len(after))
	for i, a := range after {
		before, err := c.beforeOf(a.Fields, old[i], fmt.Sprintf("old[%d]", i))
		if err != nil {
			return nil, err
		}
		out = append(out, event.Row{Kind: event.UpdateBefore, Fields: before}, a)
	}
	return out, nil
}

// EncodeChange implements Changelog: as Flink's CanalJsonSerializationSchema,
// {"data":[{…}],"type":"INSERT"} for +I/+U, "DELETE" for -U/-D.
func (c *Canal) EncodeChange(r event.Row) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"data":[`)
	if err := c.json.encodeObject(&buf, r.Fields, c.fields); err != nil {
		return nil, err
	}
	buf.WriteString(`],`)
	return endWithType(&buf, r, "INSERT", "DELETE"), nil
}

// Maxwell is Flink's maxwell-json format: {"data":{…},"old":{…},"type":…}.
// insert is +I[data], delete -D[data], update -U[data with the fields of
// old] +U[data].
type Maxwell struct{ cdc }

// DecodeChanges implements Changelog.
func (m *Maxwell) DecodeChanges(data []byte) ([]event.Row, error) {
	obj, err := m.parse(data)
	if obj == nil || err != nil {
		return nil, err
	}
	typ, _ := obj["type"].(string)
	var k event.RowKind
	switch typ {
	case "insert":
		k = event.Insert
	case "delete":
		k = event.Delete
	case "update":
		k = event.UpdateAfter
	default:
		return nil, m.errorf(`unknown "type" value %s: want insert, update or delete`, jsonText(obj["type"]))
	}
	row, ok, err := m.rowOf(obj["data"], "data")
	if err == nil && !ok {
		err = m.errorf(`the "data" of a %s event is null or missing`, typ)
	}
	if err != nil {
		return nil, err
	}
	after := event.Row{Kind: k, Fields: row}
	if k != event.UpdateAfter {
		return []event.Row{after}, nil
	}
	before, err := m.beforeOf(row, obj["old"], "old")
	if err != nil {
		return nil, err
	}
	return []event.Row{{Kind: event.UpdateBefore, Fields: before}, after}, nil
}

// EncodeChange implements Changelog: as Flink's
// MaxwellJsonSerializationSchema, {"data":{…},"type":"insert"} for +I/+U,
// "delete" for -U/-D.
func (m *Maxwell) EncodeChange(r event.Row) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	if err := m.object(&buf, "data", r.Fields); err != nil {
		return nil, err
	}
	buf.WriteByte(',')
	return endWithType(&buf, r, "insert", "delete"), nil
}
