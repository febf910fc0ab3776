package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/weirstream/weir/event"
)

// UpsertMessageDecoder turns an upsert record with a (non-nil) value into
// the row's fields, reading the record's metadata (timestamp, offset,
// headers, …) as well as its key and value: Flink's upsert-kafka with
// metadata columns. An error makes the record a bad record.
type UpsertMessageDecoder func(m Message) ([]any, error)

// NewUpsertMessageSource is NewUpsertSource for a table that reads record
// metadata. The split's table keeps, for every live key, the last record's
// value and metadata, so the -U or -D row of a later record carries the
// metadata of the record it replaces, as Flink's ChangelogNormalize keeps
// whole rows. A record whose row equals the key's last row is dropped.
func NewUpsertMessageSource(decode UpsertMessageDecoder, opts ...SourceOption) (*Source[event.Row], error) {
	if decode == nil {
		return nil, fmt.Errorf("%w: upsert-kafka source needs a decoder", ErrConfig)
	}
	s, err := NewUpsertSource(func(key, value []byte) ([]any, error) { return decode(Message{Key: key, Value: value}) }, opts...)
	if err != nil {
		return nil, err
	}
	s.upsertMsg = decode
	return s, nil
}

// storedMagic starts a table entry that holds a whole record (value and
// metadata) rather than the value alone.
var storedMagic = []byte("\x00wr1")

// errStoredWithoutMeta is a restore of a checkpoint whose upsert table
// holds values only into a source that reads metadata.
var errStoredWithoutMeta = errors.New("the checkpoint's upsert table holds values without record metadata " +
	"(it was taken by a job that read no metadata columns); restore it into a table without metadata columns, or start without it")

// encodeStored writes a record's value and metadata as a table entry.
func encodeStored(m Message) []byte {
	b := append([]byte(nil), storedMagic...)
	b = binary.AppendUvarint(b, uint64(len(m.Value)))
	b = append(b, m.Value...)
	b = appendString(b, m.Topic)
	b = binary.AppendVarint(b, int64(m.Partition))
	b = binary.AppendVarint(b, m.Offset)
	b = binary.AppendVarint(b, m.Timestamp.UnixMilli())
	b = appendString(b, m.TimestampType)
	b = binary.AppendVarint(b, int64(m.LeaderEpoch))
	b = binary.AppendUvarint(b, uint64(len(m.Headers)))
	for _, h := range m.Headers {
		b = appendString(b, h.Key)
		b = binary.AppendUvarint(b, uint64(len(h.Value)))
		b = append(b, h.Value...)
	}
	return b
}

// decodeStored reads a table entry of key back into its record.
func decodeStored(key, b []byte) (Message, error) {
	if !bytes.HasPrefix(b, storedMagic) {
		return Message{}, errStoredWithoutMeta
	}
	d := decoder{b: b[len(storedMagic):]}
	m := Message{Key: key, Value: d.bytes(), Topic: d.string(), Partition: int32(d.varint()), Offset: d.varint()}
	m.Timestamp = time.UnixMilli(d.varint())
	m.TimestampType, m.LeaderEpoch = d.string(), int32(d.varint())
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)) {
		d.fail()
	}
	for i := uint64(0); d.err == nil && i < n; i++ {
		m.Headers = append(m.Headers, Header{Key: d.string(), Value: d.bytes()})
	}
	if d.err != nil || len(d.b) != 0 {
		return Message{}, fmt.Errorf("%w: upsert table entry", errCorrupt)
	}
	return m, nil
}

// storedValue is the value of a table entry: itself, or the value of a
// whole record (a checkpoint of a job that read metadata, restored into
// one that reads none).
func storedValue(b []byte) []byte {
	if bytes.HasPrefix(b, storedMagic) {
		if m, err := decodeStored(nil, b); err == nil {
			return m.Value
		}
	}
	return b
}
