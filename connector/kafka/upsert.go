package kafka

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// UpsertDecoder turns the key and (non-nil) value of an upsert record into
// the row's fields. An error makes the record a bad record.
type UpsertDecoder func(key, value []byte) ([]any, error)

// errNoKey is the cause of the bad record an upsert source finds without a
// key: it cannot say which row the record replaces.
var errNoKey = errors.New("upsert-kafka record without a key")

// NewUpsertSource returns a source reading an upsert topic (Flink's
// upsert-kafka: key = primary key, value = the row, nil value = delete,
// as NewUpsertSink writes it) back as a changelog of event.Row:
//
//   - the first value of a key is +I[row];
//   - a later, different value is -U[old row] then +U[new row]; the same
//     value again is dropped (nothing changed);
//   - a tombstone is -D[old row]; a tombstone for an unknown key is dropped.
//
// This is Flink's upsert-kafka source followed by its ChangelogNormalize,
// done per partition: the split keeps the last value of every live key and
// checkpoints it with its position, so a restore (also onto another
// parallelism: the table travels with the split) continues the changelog
// exactly. The rule assumes every key lives in one partition (keyed
// partitioning, as Kafka producers and NewUpsertSink do); the checkpoint
// grows with the number of live keys.
//
// Deserializer and MessageDeserializer must not be given; decode reads the
// records. The bad-record policy applies to records decode rejects and to
// records without a key.
func NewUpsertSource(decode UpsertDecoder, opts ...SourceOption) (*Source[event.Row], error) {
	if decode == nil {
		return nil, fmt.Errorf("%w: upsert-kafka source needs a decoder", ErrConfig)
	}
	s, err := NewSource[event.Row](opts...)
	if err != nil {
		return nil, err
	}
	if s.cfg.decoder != nil {
		return nil, fmt.Errorf("%w: upsert-kafka source: pass the decoder to NewUpsertSource, not as Deserializer", ErrConfig)
	}
	s.upsert = decode
	return s, nil
}

// emitUpsert turns one upsert record into zero, one or two changelog rows
// and updates the split's table. Called on the subtask goroutine only.
func (r *reader) emitUpsert(st *splitState, rec *kgo.Record, out operator.ReaderOutput) (int, error) {
	if rec.Key == nil {
		return 0, r.badRecord(rec, errNoKey)
	}
	if r.upsertMsg != nil {
		return r.emitUpsertMeta(st, rec, out)
	}
	ts := rec.Timestamp.UnixMilli()
	old, had := st.table[string(rec.Key)]
	old = storedValue(old)
	if had && rec.Value != nil && bytes.Equal(old, rec.Value) {
		return 0, nil
	}
	var row []any
	if rec.Value != nil {
		var err error
		if row, err = r.upsert(rec.Key, rec.Value); err != nil {
			return 0, r.badRecord(rec, err)
		}
	}
	n := 0
	if had {
		prev, err := r.upsert(rec.Key, old)
		if err != nil { // it decoded when it was stored: the decoder is not deterministic
			return 0, fmt.Errorf("kafka source: topic %s partition %d: decoding the stored value of a key again: %w",
				rec.Topic, rec.Partition, err)
		}
		kind := event.UpdateBefore
		if rec.Value == nil {
			kind = event.Delete
		}
		out.Collect(st.id, event.Record{Value: event.Row{Kind: kind, Fields: prev}, Timestamp: ts})
		n++
	}
	if rec.Value == nil {
		delete(st.table, string(rec.Key))
		return n, nil
	}
	kind := event.Insert
	if had {
		kind = event.UpdateAfter
	}
	out.Collect(st.id, event.Record{Value: event.Row{Kind: kind, Fields: row}, Timestamp: ts})
	// A copy: the record's slices share the fetch buffer, which the table
	// would otherwise keep alive.
	st.table[string(rec.Key)] = bytes.Clone(rec.Value)
	return n + 1, nil
}

// emitUpsertMeta is emitUpsert for a source that reads metadata: the
// table keeps whole records, a row is the value's fields and the record's
// metadata, and a record is dropped when its row equals the key's last one.
func (r *reader) emitUpsertMeta(st *splitState, rec *kgo.Record, out operator.ReaderOutput) (int, error) {
	ts := rec.Timestamp.UnixMilli()
	var row, prev []any
	if rec.Value != nil {
		var err error
		if row, err = r.upsertMsg(messageOf(rec)); err != nil {
			return 0, r.badRecord(rec, err)
		}
	}
	old, had := st.table[string(rec.Key)]
	if had {
		m, err := decodeStored(rec.Key, old)
		if err == nil {
			prev, err = r.upsertMsg(m)
		}
		if err != nil {
			return 0, fmt.Errorf("kafka source: topic %s partition %d: decoding the stored record of a key again: %w",
				rec.Topic, rec.Partition, err)
		}
	}
	if rec.Value == nil {
		delete(st.table, string(rec.Key))
		if !had {
			return 0, nil
		}
		out.Collect(st.id, event.Record{Value: event.Row{Kind: event.Delete, Fields: prev}, Timestamp: ts})
		return 1, nil
	}
	st.table[string(rec.Key)] = encodeStored(messageOf(rec)) // a copy, not the fetch buffer
	if !had {
		out.Collect(st.id, event.Record{Value: event.Row{Kind: event.Insert, Fields: row}, Timestamp: ts})
		return 1, nil
	}
	if reflect.DeepEqual(prev, row) {
		return 0, nil
	}
	out.Collect(st.id, event.Record{Value: event.Row{Kind: event.UpdateBefore, Fields: prev}, Timestamp: ts})
	out.Collect(st.id, event.Record{Value: event.Row{Kind: event.UpdateAfter, Fields: row}, Timestamp: ts})
	return 2, nil
}
