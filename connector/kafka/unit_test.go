package kafka

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
)

func TestSplitIDs(t *testing.T) {
	for _, tp := range []TopicPartition{{"orders", 0}, {"my-topic-2", 17}, {"a.b_c", 2147483647}} {
		got, err := parseSplitID(splitID(tp.Topic, tp.Partition))
		if err != nil || got != tp {
			t.Errorf("%v: round trip gave %v, %v", tp, got, err)
		}
	}
	for _, bad := range []string{"", "orders", "-3", "orders-", "orders-x", "orders-+1"} {
		if _, err := parseSplitID(bad); err == nil {
			t.Errorf("parseSplitID(%q) accepted it", bad)
		}
	}
}

// TestOwnerSpreadsPartitions: each reader gets an even share of a topic.
func TestOwnerSpreadsPartitions(t *testing.T) {
	for _, readers := range []int{1, 2, 3, 5} {
		count := make([]int, readers)
		for p := int32(0); p < 30; p++ {
			count[owner(TopicPartition{"orders", p}, readers)]++
		}
		for i, n := range count {
			if n != 30/readers {
				t.Errorf("%d readers: reader %d owns %d of 30 partitions", readers, i, n)
			}
		}
	}
}

func TestPositionEncoding(t *testing.T) {
	for _, p := range []position{{0, -1}, {42, 100}, {1 << 40, -1}} {
		got, err := decodePosition(p.encode())
		if err != nil || got != p {
			t.Errorf("%+v: round trip gave %+v, %v", p, got, err)
		}
	}
	for _, bad := range [][]byte{nil, {9}, {1}, {1, 2}, append(position{1, 2}.encode(), 0)} {
		if _, err := decodePosition(bad); err == nil {
			t.Errorf("decodePosition(%v) accepted it", bad)
		}
	}
}

func FuzzDecodePosition(f *testing.F) {
	f.Add(position{5, 10}.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePosition(b)
		if err != nil {
			return
		}
		if back, err := decodePosition(p.encode()); err != nil || back != p {
			t.Fatalf("%v decodes to %+v, which does not round-trip: %+v, %v", b, p, back, err)
		}
	})
}

func TestCommittableEncoding(t *testing.T) {
	c := committable{txnID: "job-1-3", producerID: 3001, epoch: 32767, checkpoint: 12}
	got, err := decodeCommittable(c.encode())
	if err != nil || got != c {
		t.Fatalf("round trip gave %+v, %v", got, err)
	}
	ids := []string{"a-0-1", "b-2-0"}
	back, err := decodeWriterState(encodeWriterState(ids))
	if err != nil || !reflect.DeepEqual(back, ids) {
		t.Fatalf("writer state round trip gave %v, %v", back, err)
	}
	if _, err := decodeCommittable(c.encode()[:5]); !errors.Is(err, errCorrupt) {
		t.Errorf("truncated committable: %v", err)
	}
}

func FuzzDecodeCommittable(f *testing.F) {
	f.Add(committable{txnID: "p-0-1", producerID: 7, epoch: 3, checkpoint: 9}.encode())
	f.Add(encodeWriterState([]string{"p-0-1"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := decodeCommittable(b); err == nil {
			if back, err := decodeCommittable(c.encode()); err != nil || back != c {
				t.Fatalf("%+v does not round-trip", c)
			}
		}
		_, _ = decodeWriterState(b)
	})
}

func TestOwnsTxnID(t *testing.T) {
	cases := []struct {
		id          string
		sub, par    int
		owns        bool
		explanation string
	}{
		{"job-0-3", 0, 2, true, "own id"},
		{"job-1-0", 0, 2, false, "another live subtask's"},
		{"job-2-0", 0, 2, true, "old subtask 2 maps to 0"},
		{"job-3-5", 1, 2, true, "old subtask 3 maps to 1"},
		{"job-3-5", 0, 2, false, "old subtask 3 maps to 1"},
		{"job-1-0-2", 1, 2, false, "another prefix (job-1)"},
		{"job-x-0", 0, 1, false, "not a subtask number"},
		{"other-0-0", 0, 1, false, "another prefix"},
		{"job-0", 0, 1, false, "no slot"},
	}
	for _, tc := range cases {
		if got := ownsTxnID("job", tc.id, tc.sub, tc.par); got != tc.owns {
			t.Errorf("%s by subtask %d of %d: %v, want %v (%s)", tc.id, tc.sub, tc.par, got, tc.owns, tc.explanation)
		}
	}
}

func TestOptionValidation(t *testing.T) {
	srcCases := []struct {
		opts []SourceOption
		want string
	}{
		{[]SourceOption{Topics("t")}, "kafka.Brokers"},
		{[]SourceOption{Brokers("b:1")}, "kafka.Topics"},
		{[]SourceOption{Brokers("b:1"), Topics("t"), StartingOffsets(CommittedOffsets(nil))}, "GroupID"},
		{[]SourceOption{Brokers("b:1"), Topics("t"), CommitOffsetsOnCheckpoint(true)}, "GroupID"},
		{[]SourceOption{Brokers("b:1"), Topics("t"), Deserializer(func([]byte) (int, error) { return 0, nil })}, "does not produce string"},
	}
	for _, tc := range srcCases {
		if _, err := NewSource[string](tc.opts...); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewSource: got %v, want ErrConfig mentioning %q", err, tc.want)
		}
	}
	sinkCases := []struct {
		opts []SinkOption
		want string
	}{
		{[]SinkOption{Brokers("b:1")}, "kafka.Topic"},
		{[]SinkOption{Brokers("b:1"), Topic("t"), Guarantee(delivery.ExactlyOnce)}, "TransactionalIDPrefix"},
		{[]SinkOption{Brokers("b:1"), Topic("t"), BadRecords(DeadLetter("dlq"))}, "not DeadLetter"},
		{[]SinkOption{Brokers("b:1"), Topic("t"), TransactionalIDPoolSize(1)}, "at least 2"},
		{[]SinkOption{Brokers("b:1"), Topic("t"), KeyFunc(func(int) []byte { return nil })}, "KeyFunc"},
		{[]SinkOption{Brokers("b:1"), Topic("t"), Compression("brotli")}, `Compression "brotli": want none, gzip, snappy, lz4 or zstd`},
	}
	for _, tc := range sinkCases {
		if _, err := NewSink[string](tc.opts...); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewSink: got %v, want ErrConfig mentioning %q", err, tc.want)
		}
	}
	if _, err := NewSink[string](Brokers("b:1,c:2"), Topic("t")); err != nil {
		t.Errorf("a valid sink: %v", err)
	}
	_, err := SinkOptionsFromMap(map[string]string{"topic": "t", "properties.compression.type": "Snappy"})
	if want := "'properties.compression.type' = 'Snappy': want none, gzip, snappy, lz4 or zstd"; err == nil || err.Error() != want {
		t.Errorf("SinkOptionsFromMap: got %v, want %s", err, want)
	}
}

// TestDiscoveryDefault: Flink's 5 minutes unless set; 0 or less is off, and
// a bounded source never discovers.
func TestDiscoveryDefault(t *testing.T) {
	for _, tc := range []struct {
		opts []SourceOption
		want time.Duration
	}{
		{nil, 5 * time.Minute},
		{[]SourceOption{PartitionDiscoveryInterval(time.Second)}, time.Second},
		{[]SourceOption{PartitionDiscoveryInterval(0)}, 0},
		{[]SourceOption{PartitionDiscoveryInterval(-1)}, -1},
		{[]SourceOption{Bounded()}, 0},
	} {
		src, err := NewSource[string](append(tc.opts, Brokers("b:1"), Topics("t"))...)
		if err != nil {
			t.Fatal(err)
		}
		if src.cfg.discovery != tc.want {
			t.Errorf("%d options: discovery every %v, want %v", len(tc.opts), src.cfg.discovery, tc.want)
		}
	}
}

func TestParseDeliveryGuarantee(t *testing.T) {
	for s, want := range map[string]delivery.Guarantee{"none": delivery.None, "at-least-once": delivery.AtLeastOnce,
		"EXACTLY_ONCE": delivery.ExactlyOnce} {
		if got, err := parseGuarantee(s); err != nil || got != want {
			t.Errorf("%q: %v, %v", s, got, err)
		}
	}
	if _, err := parseGuarantee("twice"); !errors.Is(err, ErrConfig) {
		t.Errorf("twice: %v", err)
	}
}

func TestDefaultDecoders(t *testing.T) {
	rec := &kgo.Record{Topic: "t", Value: []byte(`{"n":7}`), Key: []byte("k")}
	raw, _ := decoderFor[[]byte](nil)
	if v, err := raw(rec); err != nil || string(v.([]byte)) != `{"n":7}` {
		t.Errorf("raw: %v, %v", v, err)
	}
	msg, _ := decoderFor[Message](nil)
	if v, err := msg(rec); err != nil || string(v.(Message).Key) != "k" {
		t.Errorf("message: %v, %v", v, err)
	}
	js, _ := decoderFor[payload](nil)
	if v, err := js(rec); err != nil || v.(payload).N != 7 {
		t.Errorf("json: %v, %v", v, err)
	}
	if _, err := js(&kgo.Record{Value: []byte("nope")}); err == nil {
		t.Error("json accepted garbage")
	}
}

// TestSinkPrepare: serialization failures and records above
// max.request.size are bad records, decided before anything is produced.
func TestSinkPrepare(t *testing.T) {
	mk := func(p BadRecordPolicy) *Sink[string] {
		s, err := NewSink[string](Brokers("b:1"), Topic("t"), MaxRequestSize(2000), BadRecords(p))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	big := event.Record{Value: strings.Repeat("x", 3000), Timestamp: event.NoTimestamp}
	const goAdvice = "kafka: bad record: kafka sink: record for topic t is about 3093 bytes, more than max.request.size 2000 " +
		"(raise kafka.MaxRequestSize and the topic's max.message.bytes) (to drop such records set kafka.BadRecords(kafka.SkipBadRecords()))"
	if _, err := mk(FailOnBadRecord()).core.prepare(big); !errors.Is(err, ErrBadRecord) || err.Error() != goAdvice {
		t.Errorf("fail policy: got  %v\nwant %s", err, goAdvice)
	}
	// A caller with other option names (SQL) gives its own advice.
	sq, err := NewSink[string](Brokers("b:1"), Topic("t"), MaxRequestSize(2000),
		MaxRequestSizeFix("'properties.max.request.size'"), BadRecordFix("set 'sink.bad-record.policy' = 'skip'"))
	if err != nil {
		t.Fatal(err)
	}
	const sqlAdvice = "kafka: bad record: kafka sink: record for topic t is about 3093 bytes, more than max.request.size 2000 " +
		"(raise 'properties.max.request.size' and the topic's max.message.bytes) (to drop such records set 'sink.bad-record.policy' = 'skip')"
	if _, err := sq.core.prepare(big); err == nil || err.Error() != sqlAdvice {
		t.Errorf("caller's advice: got  %v\nwant %s", err, sqlAdvice)
	}
	s := mk(SkipBadRecords())
	if rec, err := s.core.prepare(big); rec != nil || err != nil || s.Metrics().RecordsSkipped.Load() != 1 {
		t.Errorf("skip policy: %v, %v, skipped %d", rec, err, s.Metrics().RecordsSkipped.Load())
	}
	rec, err := s.core.prepare(event.Record{Value: "ok", Timestamp: 1234})
	if err != nil || string(rec.Value) != "ok" || rec.Topic != "t" || !rec.Timestamp.Equal(time.UnixMilli(1234)) {
		t.Errorf("a good record: %+v, %v", rec, err)
	}
	// RecordTimestamps(false) (Flink SQL's kafka sink): the producer stamps it.
	s, err = NewSink[string](Brokers("b:1"), Topic("t"), RecordTimestamps(false))
	if err != nil {
		t.Fatal(err)
	}
	if rec, err = s.core.prepare(event.Record{Value: "ok", Timestamp: 1234}); err != nil || !rec.Timestamp.IsZero() {
		t.Errorf("RecordTimestamps(false): timestamp %v, %v; want none set", rec.Timestamp, err)
	}
}
