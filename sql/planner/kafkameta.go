package planner

import (
	"slices"
	"strings"
	"time"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/connector/kafka"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// kafkaMetaKeys are the Kafka connector's own metadata keys, in the order of
// Flink's KafkaDynamicSource.ReadableMetadata, with Flink's types. Only
// 'headers' and 'timestamp' are written (KafkaDynamicSink.WritableMetadata).
var kafkaMetaKeys = []MetadataKey{
	{Key: "topic", Type: types.Type{Kind: types.String}},
	{Key: "partition", Type: types.Type{Kind: types.Int}},
	{Key: "headers", Type: types.Type{Kind: types.Map, Key: &types.Type{Kind: types.String, Nullable: true}, Elem: &types.Type{Kind: types.Bytes, Nullable: true}}, Writable: true},
	{Key: "leader-epoch", Type: types.Type{Kind: types.Int, Nullable: true}},
	{Key: "offset", Type: types.Type{Kind: types.BigInt}},
	{Key: "timestamp", Type: types.Type{Kind: types.TimestampLTZ, Precision: 3}, Writable: true},
	{Key: "timestamp-type", Type: types.Type{Kind: types.String}},
}

// kafkaMetadata lists a kafka table's metadata keys: its value format's
// (prefixed 'value.'), then the connector's.
func kafkaMetadata(t *catalog.Table) []MetadataKey {
	var out []MetadataKey
	for _, k := range formatMetadata(valueFormatName(t)) {
		k.Key = "value." + k.Key
		out = append(out, k)
	}
	return append(out, kafkaMetaKeys...)
}

// kafkaMetaReaders reads t's metadata columns from a record, in column
// order; nil when t has none. Keys were checked by the planner
// (metadataOf); an unknown one reads NULL.
func kafkaMetaReaders(t *catalog.Table) []func(kafka.Message) any {
	var out []func(kafka.Message) any
	for _, c := range t.Columns {
		if c.Kind == parser.MetadataColumn {
			out = append(out, kafkaMetaReader(valueFormatName(t), metaKey(c)))
		}
	}
	return out
}

func kafkaMetaReader(valueFormat, key string) func(kafka.Message) any {
	if f, ok := strings.CutPrefix(key, "value."); ok {
		return formatMetaReader(valueFormat, f)
	}
	switch key {
	case "topic":
		return func(m kafka.Message) any { return m.Topic }
	case "partition":
		return func(m kafka.Message) any { return int64(m.Partition) }
	case "headers":
		return func(m kafka.Message) any {
			h := make(map[any]any, len(m.Headers))
			for _, x := range m.Headers {
				h[x.Key] = x.Value // a repeated key keeps its last value, as Flink's HashMap
			}
			return h
		}
	case "leader-epoch":
		return func(m kafka.Message) any {
			if m.LeaderEpoch < 0 {
				return nil
			}
			return int64(m.LeaderEpoch)
		}
	case "offset":
		return func(m kafka.Message) any { return m.Offset }
	case "timestamp":
		return func(m kafka.Message) any { return m.Timestamp.UTC() }
	case "timestamp-type":
		return func(m kafka.Message) any { return m.TimestampType }
	}
	return func(kafka.Message) any { return nil }
}

// withMeta appends the metadata values of m to a decoded row's fields.
func withMeta(fields []any, meta []func(kafka.Message) any, m kafka.Message) []any {
	out := make([]any, len(fields), len(fields)+len(meta))
	copy(out, fields)
	for _, f := range meta {
		out = append(out, f(m))
	}
	return out
}

// kafkaStamp writes a kafka table's 'timestamp' and 'headers' metadata
// columns into each record; nil when an INSERT writes neither.
func kafkaStamp(t *catalog.Table) kafka.SinkOption {
	written := t.WrittenMetadata()
	if len(written) == 0 {
		return nil
	}
	base := len(t.Physical())
	ts, hs := -1, -1
	for i, c := range written {
		switch metaKey(c) {
		case "timestamp":
			ts = base + i
		case "headers":
			hs = base + i
		}
	}
	return kafka.Stamp(func(r event.Row) kafka.RecordStamp {
		var s kafka.RecordStamp
		if ts >= 0 {
			if v, ok := r.Fields[ts].(time.Time); ok {
				s.Timestamp = v
			}
		}
		if hs >= 0 {
			s.Headers = headersOf(r.Fields[hs])
		}
		return s
	})
}

// headersOf turns a MAP<STRING, BYTES> into headers, sorted by key (a
// map has no order; Flink writes its HashMap's).
func headersOf(v any) []kafka.Header {
	m, _ := v.(map[any]any)
	out := make([]kafka.Header, 0, len(m))
	for k, x := range m {
		key, _ := k.(string)
		val, _ := x.([]byte)
		out = append(out, kafka.Header{Key: key, Value: val})
	}
	slices.SortFunc(out, func(a, b kafka.Header) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// formatMetadata lists a value format's metadata keys (unprefixed).
func formatMetadata(name string) []MetadataKey {
	var out []MetadataKey
	for _, m := range format.ReadableMetadata(name) {
		out = append(out, MetadataKey{Key: m.Key, Type: m.Type})
	}
	return out
}

// formatMetaReader reads a value format's metadata key from a record.
func formatMetaReader(name, key string) func(kafka.Message) any {
	for _, m := range format.ReadableMetadata(name) {
		if m.Key == key {
			read := m.Read
			return func(msg kafka.Message) any { return read(msg.Value) }
		}
	}
	return func(kafka.Message) any { return nil }
}
