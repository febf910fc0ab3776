package kafka

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/event"
)

// kvMeta decodes test upsert records with metadata: [key, value, offset,
// timestamp ms, header h].
func kvMeta(m Message) ([]any, error) {
	h := ""
	for _, x := range m.Headers {
		if x.Key == "h" {
			h = string(x.Value)
		}
	}
	return []any{string(m.Key), string(m.Value), m.Offset, m.Timestamp.UnixMilli(), h}, nil
}

// TestUpsertMetadataChangelog: with metadata, the -U and -D rows carry the
// replaced record's offset, timestamp and headers, a record equal in
// value and metadata is dropped, and the table (whole records) survives a
// checkpoint round trip; restored into a source without metadata, the
// values still drive the plain rules.
func TestUpsertMetadataChangelog(t *testing.T) {
	r := &reader{cfg: &sourceConfig{}, upsert: kv, upsertMsg: kvMeta, metrics: &SourceMetrics{}, log: slog.New(slog.DiscardHandler)}
	st := &splitState{id: "t-0", table: map[string][]byte{}}
	rec := func(key, value string, off, ts int64, h string) *kgo.Record {
		x := upsertRecord(key, value)
		x.Offset, x.Timestamp = off, time.UnixMilli(ts)
		if h != "" {
			x.Headers = []kgo.RecordHeader{{Key: "h", Value: []byte(h)}}
		}
		return x
	}
	emit := func(st *splitState, x *kgo.Record) string {
		out := &collector{}
		if _, err := r.emitUpsert(st, x, out); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range out.vals {
			got = append(got, v.(event.Row).String())
		}
		return strings.Join(got, " ")
	}
	steps := []struct {
		rec  *kgo.Record
		want string
	}{
		{rec("a", "1", 0, 10, "x"), "+I[a, 1, 0, 10, x]"},
		{rec("a", "2", 1, 11, ""), "-U[a, 1, 0, 10, x] +U[a, 2, 1, 11, ]"},
		{rec("b", "1", 2, 12, ""), "+I[b, 1, 2, 12, ]"},
		{rec("b", "<nil>", 3, 13, ""), "-D[b, 1, 2, 12, ]"},
	}
	for i, s := range steps {
		if got := emit(st, s.rec); got != s.want {
			t.Errorf("step %d: got %q, want %q", i, got, s.want)
		}
	}
	// A decoder that reads no offset sees the same row again: dropped.
	r.upsertMsg = func(m Message) ([]any, error) { return []any{string(m.Key), string(m.Value)}, nil }
	if got := emit(st, rec("a", "2", 4, 14, "")); got != "" {
		t.Errorf("an equal row: got %q, want nothing", got)
	}
	r.upsertMsg = kvMeta
	_, table, err := decodeSplitPosition(encodeUpsertPosition(position{next: 5, stop: -1}, st.table))
	if err != nil {
		t.Fatal(err)
	}
	restored := &splitState{id: "t-0", table: table}
	if got, want := emit(restored, rec("a", "3", 5, 15, "")), "-U[a, 2, 4, 14, ] +U[a, 3, 5, 15, ]"; got != want {
		t.Errorf("after a restore: got %q, want %q", got, want)
	}
	r.upsertMsg = nil // restored into a job without metadata columns
	if got, want := emit(restored, rec("a", "4", 6, 16, "")), "-U[a, 3] +U[a, 4]"; got != want {
		t.Errorf("restored without metadata: got %q, want %q", got, want)
	}
	r.upsertMsg = kvMeta // a table of values only, into a job with metadata
	if _, err := r.emitUpsert(restored, rec("a", "5", 7, 17, ""), &collector{}); !errors.Is(err, errStoredWithoutMeta) {
		t.Errorf("values-only table into a metadata source: %v, want %v", err, errStoredWithoutMeta)
	}
}

func TestStoredRecordRoundTrip(t *testing.T) {
	m := Message{Key: []byte("k"), Value: []byte("v"), Topic: "t", Partition: 3, Offset: 99, Timestamp: time.UnixMilli(1234),
		TimestampType: "CreateTime", LeaderEpoch: -1, Headers: []Header{{Key: "a", Value: []byte("1")}, {Key: "a", Value: nil}}}
	got, err := decodeStored([]byte("k"), encodeStored(m))
	if err != nil || fmt.Sprint(got) != fmt.Sprint(m) {
		t.Fatalf("got %v %v, want %v", got, err, m)
	}
	b := encodeStored(m)
	if _, err := decodeStored(nil, b[:len(b)-1]); err == nil {
		t.Error("a truncated entry decoded")
	}
}
