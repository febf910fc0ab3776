package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
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
	if err := checkJSONTypes(name, fields, ""); err != nil {
		return nil, err
	}
	std, err := timestampStandardOption(opts, name+".timestamp-format.standard")
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", name, err)
	}
	c := cdc{name: name, fields: fields, json: &JSON{Fields: fields, PlainDecimals: plain, TimestampStandard: std}}
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

// fastRow reads the row object at sp (path names it in errors) by the
// fast path; ok is false when it is not an object or a field does not
// read, which the slow path then reports.
func (c *cdc) fastRow(data []byte, sp span) (row []any, ok bool) {
	if sp.missing() || data[sp.start] != '{' {
		return nil, false
	}
	var buf [16]span
	spans := spansFor(buf[:], len(c.fields))
	if !fieldSpans(data, sp, c.json.names.of(c.fields), spans) {
		return nil, false
	}
	row, err := c.json.TimestampStandard.rowFromSpans(data, spans, c.fields, "")
	return row, err == nil
}

// fastBefore is beforeOf by the fast path: after with the fields that the
// object at sp lists.
func (c *cdc) fastBefore(data []byte, after []any, sp span) ([]any, bool) {
	if sp.missing() || data[sp.start] != '{' {
		return nil, false
	}
	var buf [16]span
	spans := spansFor(buf[:], len(c.fields))
	if !fieldSpans(data, sp, c.json.names.of(c.fields), spans) {
		return nil, false
	}
	before := append([]any(nil), after...)
	for i, f := range c.fields {
		if spans[i].missing() {
			continue
		}
		v, err := c.json.TimestampStandard.spanValue(data, spans[i], f.Type, "", f.Name)
		if err != nil {
			return nil, false
		}
		before[i] = v
	}
	return before, true
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
	row, err = c.json.TimestampStandard.decodeFields(o, c.fields, path+".")
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
		if before[i], err = c.json.TimestampStandard.fromJSON(v, f.Type, path+"."+f.Name); err != nil {
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

// object appends "key":{row} (or "key":null).
func (c *cdc) object(buf []byte, key string, row []any) ([]byte, error) {
	buf = append(strconv.AppendQuote(buf, key), ':')
	if row == nil {
		return append(buf, "null"...), nil
	}
	return c.json.appendObject(buf, row, c.fields)
}

func stringField(buf []byte, key, value string) []byte {
	return strconv.AppendQuote(append(strconv.AppendQuote(buf, key), ':'), value)
}

// endWithType ends a canal-json or maxwell-json message with its "type":
// insert for +I/+U, del for -U/-D.
func endWithType(buf []byte, r event.Row, insert, del string) []byte {
	typ := del
	if isInsert(r) {
		typ = insert
	}
	return append(stringField(buf, "type", typ), '}')
}

// newMessage is a buffer for one message of n fields.
func newMessage(n int) []byte { return make([]byte, 0, 64+32*n) }

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
	if rows, ok := d.decodeFast(data); ok {
		return rows, nil
	}
	return d.decodeSlow(data)
}

// decodeSlow decodes through encoding/json: the messages decodeFast
// leaves, and the errors.
func (d *Debezium) decodeSlow(data []byte) ([]event.Row, error) {
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

// debeziumKeys are the members decodeFast reads.
var debeziumKeys = map[string]int{"before": 0, "after": 1, "op": 2, "payload": 3}

// decodeFast decodes a well-formed change event without building a map
// of it; ok is false for anything else, which DecodeChanges then reads
// the slow way (writing its error).
func (d *Debezium) decodeFast(data []byte) (rows []event.Row, ok bool) {
	var sp [4]span
	if !fieldSpans(data, span{}, debeziumKeys, sp[:]) {
		return nil, false
	}
	if d.SchemaInclude {
		p := sp[3]
		if p.missing() || data[p.start] != '{' || !fieldSpans(data, p, debeziumKeys, sp[:]) {
			return nil, false
		}
	}
	var before, after []any
	switch string(rawString(data, sp[2])) {
	case "c", "r":
		after, ok = d.fastRow(data, sp[1])
		return []event.Row{{Kind: event.Insert, Fields: after}}, ok
	case "d":
		before, ok = d.fastRow(data, sp[0])
		return []event.Row{{Kind: event.Delete, Fields: before}}, ok
	case "u":
		if before, ok = d.fastRow(data, sp[0]); !ok {
			return nil, false
		}
		after, ok = d.fastRow(data, sp[1])
		return []event.Row{{Kind: event.UpdateBefore, Fields: before}, {Kind: event.UpdateAfter, Fields: after}}, ok
	}
	return nil, false
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
	before, after, op := r.Fields, []any(nil), "d"
	if isInsert(r) {
		before, after, op = nil, r.Fields, "c"
	}
	buf, err := d.object(append(newMessage(len(r.Fields)), '{'), "before", before)
	if err != nil {
		return nil, err
	}
	if buf, err = d.object(append(buf, ','), "after", after); err != nil {
		return nil, err
	}
	return append(stringField(append(buf, ','), "op", op), '}'), nil
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
	if rows, ok := c.decodeFast(data); ok {
		return rows, nil
	}
	return c.decodeSlow(data)
}

// decodeSlow decodes through encoding/json: the messages decodeFast
// leaves, and the errors.
func (c *Canal) decodeSlow(data []byte) ([]event.Row, error) {
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

// kindOf is the row kind of a change type named as written (an update
// is its row after); ok is false for another name.
func kindOf(typ []byte, insert, del, update string) (k event.RowKind, ok bool) {
	switch string(typ) {
	case insert:
		return event.Insert, true
	case del:
		return event.Delete, true
	case update:
		return event.UpdateAfter, true
	}
	return 0, false
}

// canalKeys are the members decodeFast reads.
var canalKeys = map[string]int{"data": 0, "old": 1, "type": 2, "database": 3, "table": 4}

// decodeFast decodes a well-formed event without building a map of it;
// ok is false for anything else, which DecodeChanges then reads the slow
// way (writing its error).
func (c *Canal) decodeFast(data []byte) (rows []event.Row, ok bool) {
	var sp [5]span
	if !fieldSpans(data, span{}, canalKeys, sp[:]) {
		return nil, false
	}
	if !c.includedSpans(data, sp[3], sp[4]) {
		return nil, true
	}
	typ := rawString(data, sp[2])
	if string(typ) == "CREATE" {
		return nil, true
	}
	k, ok := kindOf(typ, "INSERT", "DELETE", "UPDATE")
	if !ok {
		return nil, false
	}
	var after [][]any
	if !elements(data, sp[0], func(v span) bool {
		row, ok := c.fastRow(data, v)
		after = append(after, row)
		return ok
	}) {
		return nil, false
	}
	if k != event.UpdateAfter {
		rows = make([]event.Row, len(after))
		for i, a := range after {
			rows[i] = event.Row{Kind: k, Fields: a}
		}
		return rows, true
	}
	return c.fastUpdates(data, after, sp[1])
}

// fastUpdates pairs each row after an update with the row before it,
// made from the element of "old" (at sp) at its place.
func (c *Canal) fastUpdates(data []byte, after [][]any, sp span) ([]event.Row, bool) {
	rows := make([]event.Row, 0, 2*len(after))
	i := 0
	if !elements(data, sp, func(v span) bool {
		if i >= len(after) {
			return false
		}
		before, ok := c.fastBefore(data, after[i], v)
		rows = append(rows, event.Row{Kind: event.UpdateBefore, Fields: before}, event.Row{Kind: event.UpdateAfter, Fields: after[i]})
		i++
		return ok
	}) || i != len(after) {
		return nil, false
	}
	return rows, true
}

// includedSpans is included for the members at db and table.
func (c *Canal) includedSpans(data []byte, db, table span) bool {
	name := func(sp span) string {
		if isString(data, sp) {
			return spanString(data, sp)
		}
		return ""
	}
	return (c.Database == nil || c.Database.MatchString(name(db))) && (c.Table == nil || c.Table.MatchString(name(table)))
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
	buf, err := c.json.appendObject(append(newMessage(len(r.Fields)), `{"data":[`...), r.Fields, c.fields)
	if err != nil {
		return nil, err
	}
	return endWithType(append(buf, "],"...), r, "INSERT", "DELETE"), nil
}

// Maxwell is Flink's maxwell-json format: {"data":{…},"old":{…},"type":…}.
// insert is +I[data], delete -D[data], update -U[data with the fields of
// old] +U[data].
type Maxwell struct{ cdc }

// DecodeChanges implements Changelog.
func (m *Maxwell) DecodeChanges(data []byte) ([]event.Row, error) {
	if rows, ok := m.decodeFast(data); ok {
		return rows, nil
	}
	return m.decodeSlow(data)
}

// decodeSlow decodes through encoding/json: the messages decodeFast
// leaves, and the errors.
func (m *Maxwell) decodeSlow(data []byte) ([]event.Row, error) {
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

// maxwellKeys are the members decodeFast reads.
var maxwellKeys = map[string]int{"data": 0, "old": 1, "type": 2}

// decodeFast decodes a well-formed event without building a map of it;
// ok is false for anything else, which DecodeChanges then reads the slow
// way (writing its error).
func (m *Maxwell) decodeFast(data []byte) (rows []event.Row, ok bool) {
	var sp [3]span
	if !fieldSpans(data, span{}, maxwellKeys, sp[:]) {
		return nil, false
	}
	k, ok := kindOf(rawString(data, sp[2]), "insert", "delete", "update")
	if !ok {
		return nil, false
	}
	after, ok := m.fastRow(data, sp[0])
	if !ok {
		return nil, false
	}
	if k != event.UpdateAfter {
		return []event.Row{{Kind: k, Fields: after}}, true
	}
	before, ok := m.fastBefore(data, after, sp[1])
	return []event.Row{{Kind: event.UpdateBefore, Fields: before}, {Kind: event.UpdateAfter, Fields: after}}, ok
}

// EncodeChange implements Changelog: as Flink's
// MaxwellJsonSerializationSchema, {"data":{…},"type":"insert"} for +I/+U,
// "delete" for -U/-D.
func (m *Maxwell) EncodeChange(r event.Row) ([]byte, error) {
	buf, err := m.object(append(newMessage(len(r.Fields)), '{'), "data", r.Fields)
	if err != nil {
		return nil, err
	}
	return endWithType(append(buf, ','), r, "insert", "delete"), nil
}
