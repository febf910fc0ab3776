package format

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/weirstream/weir/types"
)

// Metadata is a metadata key a changelog format reads from each message's
// envelope (Flink's DecodingFormat.listReadableMetadata): a Kafka table
// reads it as 'value.<Key>'. Every key is nullable.
type Metadata struct {
	Key  string
	Type types.Type
	// Read returns the key's value in a message (nil when it has none).
	Read func(message []byte) any
}

// ReadableMetadata lists the metadata keys of format name, in Flink's
// order; none for formats without an envelope.
func ReadableMetadata(name string) []Metadata {
	switch strings.ToLower(name) {
	case "debezium-json":
		return debeziumMetadata
	case "canal-json":
		return canalMetadata
	case "maxwell-json":
		return maxwellMetadata
	}
	return nil
}

var (
	str      = types.Type{Kind: types.String, Nullable: true}
	ltz3     = types.Type{Kind: types.TimestampLTZ, Precision: 3, Nullable: true}
	strArray = types.Type{Kind: types.Array, Elem: &str, Nullable: true}
)

var debeziumMetadata = []Metadata{
	{"schema", str, func(b []byte) any { return rawField(envelope(b, false), "schema") }},
	{"ingestion-timestamp", ltz3, func(b []byte) any { return millis(envelope(b, true)["ts_ms"], 1) }},
	{"source.timestamp", ltz3, func(b []byte) any { return millis(debeziumSource(b)["ts_ms"], 1) }},
	{"source.database", str, func(b []byte) any { return text(debeziumSource(b)["db"]) }},
	{"source.schema", str, func(b []byte) any { return text(debeziumSource(b)["schema"]) }},
	{"source.table", str, func(b []byte) any { return text(debeziumSource(b)["table"]) }},
	{"source.properties", types.Type{Kind: types.Map, Key: &str, Elem: &str, Nullable: true}, func(b []byte) any {
		src := debeziumSource(b)
		if src == nil {
			return nil
		}
		m := make(map[any]any, len(src))
		for k, v := range src {
			m[k] = text(v)
		}
		return m
	}},
}

var canalMetadata = []Metadata{
	{"database", str, func(b []byte) any { return text(envelope(b, false)["database"]) }},
	{"table", str, func(b []byte) any { return text(envelope(b, false)["table"]) }},
	{"pk-names", strArray, func(b []byte) any { return texts(envelope(b, false)["pkNames"]) }},
	{"ingestion-timestamp", ltz3, func(b []byte) any { return millis(envelope(b, false)["ts"], 1) }},
	{"event-timestamp", ltz3, func(b []byte) any { return millis(envelope(b, false)["es"], 1) }},
}

// Maxwell's ts is in seconds.
var maxwellMetadata = []Metadata{
	{"database", str, func(b []byte) any { return text(envelope(b, false)["database"]) }},
	{"table", str, func(b []byte) any { return text(envelope(b, false)["table"]) }},
	{"primary-key-columns", strArray, func(b []byte) any { return texts(envelope(b, false)["primary_key_columns"]) }},
	{"ingestion-timestamp", ltz3, func(b []byte) any { return millis(envelope(b, false)["ts"], 1000) }},
}

// envelope parses a message's top-level object; with payload, a Debezium
// message written with its schema ({"schema":…, "payload":{…}}) gives its
// payload. A message that is not an object gives nil.
func envelope(b []byte, payload bool) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	if p, ok := m["payload"]; ok && payload && len(p) > 0 && p[0] == '{' {
		var inner map[string]json.RawMessage
		if json.Unmarshal(p, &inner) == nil {
			return inner
		}
	}
	return m
}

func debeziumSource(b []byte) map[string]json.RawMessage {
	var src map[string]json.RawMessage
	if json.Unmarshal(envelope(b, true)["source"], &src) != nil {
		return nil
	}
	return src
}

// rawField is a field's JSON text; nil when absent or null.
func rawField(m map[string]json.RawMessage, k string) any {
	v, ok := m[k]
	if !ok || bytes.Equal(v, []byte("null")) {
		return nil
	}
	return string(v)
}

// text is a JSON string's value, another value's JSON text, nil for null.
func text(v json.RawMessage) any {
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

func texts(v json.RawMessage) any {
	var xs []json.RawMessage
	if json.Unmarshal(v, &xs) != nil || xs == nil {
		return nil
	}
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = text(x)
	}
	return out
}

// millis reads a JSON integer of unit ms (1) or seconds (1000) as an
// instant.
func millis(v json.RawMessage, unit int64) any {
	var n int64
	if len(v) == 0 || json.Unmarshal(v, &n) != nil {
		return nil
	}
	return time.UnixMilli(n * unit).UTC()
}
