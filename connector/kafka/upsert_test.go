package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/internal/sim"
	"github.com/weirstream/weir/runtime"
)

// kv decodes test upsert records: fields [key, value]; the value "bad" is
// a bad record.
func kv(key, value []byte) ([]any, error) {
	if string(value) == "bad" {
		return nil, errors.New("bad value")
	}
	return []any{string(key), string(value)}, nil
}

// upsertStep is one upsert record: key "" means no key, value "<nil>" a
// tombstone.
type upsertStep struct{ key, value, want string }

func upsertRecord(key, value string) *kgo.Record {
	r := &kgo.Record{Topic: "t", Offset: 0, Timestamp: time.UnixMilli(1000)}
	if key != "" {
		r.Key = []byte(key)
	}
	if value != "<nil>" {
		r.Value = []byte(value)
	}
	return r
}

// TestUpsertChangelogRules feeds upsert records to a reader's upsert path:
// first value +I, a change -U/+U, the same value nothing, a tombstone -D
// of the old row, an unknown key's tombstone nothing; bad records and
// records without a key are skipped under the skip policy; the table
// survives a checkpoint round trip.
func TestUpsertChangelogRules(t *testing.T) {
	r := &reader{cfg: &sourceConfig{commonConfig: commonConfig{badRecords: SkipBadRecords()}}, upsert: kv,
		metrics: &SourceMetrics{}, log: slog.New(slog.DiscardHandler)}
	st := &splitState{id: "t-0", table: map[string][]byte{}}
	steps := []upsertStep{
		{"a", "1", "+I[a, 1]"}, {"b", "1", "+I[b, 1]"}, {"a", "1", ""}, {"a", "2", "-U[a, 1] +U[a, 2]"},
		{"c", "<nil>", ""}, {"a", "<nil>", "-D[a, 2]"}, {"a", "3", "+I[a, 3]"}, {"b", "bad", ""},
		{"", "1", ""}, {"b", "<nil>", "-D[b, 1]"}, {"d", "", "+I[d, ]"}, {"d", "", ""},
	}
	run := func(st *splitState, steps []upsertStep) {
		for i, s := range steps {
			out := &collector{}
			if _, err := r.emitUpsert(st, upsertRecord(s.key, s.value), out); err != nil {
				t.Fatalf("step %d %v: %v", i, s, err)
			}
			var got []string
			for _, v := range out.vals {
				got = append(got, v.(event.Row).String())
			}
			if strings.Join(got, " ") != s.want {
				t.Errorf("step %d (%s=%s): got %q, want %q", i, s.key, s.value, strings.Join(got, " "), s.want)
			}
		}
	}
	run(st, steps)
	if n := r.metrics.RecordsSkipped.Load(); n != 2 {
		t.Errorf("skipped %d records, want 2 (a bad value and a missing key)", n)
	}
	pos, table, err := decodeSplitPosition(encodeUpsertPosition(position{next: 12, stop: -1}, st.table))
	if err != nil || pos != (position{12, -1}) || !reflect.DeepEqual(table, st.table) {
		t.Fatalf("table round trip: %+v %v %v, want %v", pos, table, err, st.table)
	}
	run(&splitState{id: "t-0", table: table}, []upsertStep{{"a", "4", "-U[a, 3] +U[a, 4]"}, {"d", "<nil>", "-D[d, ]"}})

	r.cfg.badRecords = FailOnBadRecord()
	if _, err := r.emitUpsert(st, upsertRecord("", "1"), &collector{}); !errors.Is(err, ErrBadRecord) || !errors.Is(err, errNoKey) {
		t.Errorf("a record without a key under the fail policy: %v", err)
	}
}

func TestUpsertPositionEncoding(t *testing.T) {
	for _, table := range []map[string][]byte{{}, {"k": {}}, {"a": []byte("1"), "": []byte("x"), "long": make([]byte, 300)}} {
		p := position{next: 7, stop: 99}
		got, back, err := decodeSplitPosition(encodeUpsertPosition(p, table))
		if err != nil || got != p || !reflect.DeepEqual(back, table) {
			t.Errorf("%v: round trip gave %+v %v %v", table, got, back, err)
		}
	}
	if p, table, err := decodeSplitPosition(position{3, -1}.encode()); err != nil || p != (position{3, -1}) || table == nil {
		t.Errorf("a plain position: %+v %v %v, want an empty table", p, table, err)
	}
	good := encodeUpsertPosition(position{1, 2}, map[string][]byte{"k": []byte("v")})
	for _, bad := range [][]byte{{2}, good[:len(good)-1], append(good, 0), {2, 2, 4, 100}} {
		if _, _, err := decodeSplitPosition(bad); err == nil {
			t.Errorf("decodeSplitPosition(%v) accepted it", bad)
		}
	}
}

func FuzzDecodeUpsertPosition(f *testing.F) {
	f.Add(encodeUpsertPosition(position{5, 10}, map[string][]byte{"k": []byte("v")}))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, table, err := decodeSplitPosition(b)
		if err != nil {
			return
		}
		p2, table2, err := decodeSplitPosition(encodeUpsertPosition(p, table))
		if err != nil || p2 != p || !reflect.DeepEqual(table, table2) {
			t.Fatalf("%v decodes to %+v %v, which does not round-trip: %v", b, p, table, err)
		}
	})
}

// upsertInput writes n upsert records over keys k000…k(keys-1), each key
// in partition index mod partitions, about one in eight a tombstone and
// values from a small set (so repeats happen); it returns the changelog
// every key must produce, computed independently of the source.
func upsertInput(c *cluster, topic string, partitions, keys, n int) map[string][]string {
	rng := rand.New(rand.NewSource(7))
	last := map[string]string{}
	want := map[string][]string{}
	recs := make([]*kgo.Record, 0, n)
	for range n {
		i := rng.Intn(keys)
		k := fmt.Sprintf("k%03d", i)
		r := &kgo.Record{Topic: topic, Partition: int32(i % partitions), Key: []byte(k)}
		old, had := last[k]
		if rng.Intn(8) == 0 {
			if had {
				want[k] = append(want[k], "-D|"+k+"|"+old)
				delete(last, k)
			}
		} else {
			v := fmt.Sprint(rng.Intn(5))
			r.Value = []byte(v)
			switch {
			case !had:
				want[k] = append(want[k], "+I|"+k+"|"+v)
			case old != v:
				want[k] = append(want[k], "-U|"+k+"|"+old, "+U|"+k+"|"+v)
			}
			last[k] = v
		}
		recs = append(recs, r)
	}
	c.produceRecords(recs...)
	return want
}

// TestUpsertSourceExactlyOnceAcrossRestores reads an upsert topic through a
// job that crashes four times, writing the changelog exactly once to a
// second topic (keyed, so each key's rows stay in order): every key's
// changelog equals the one computed from the input. A restore that lost a
// split's table would show up as +I where -U/+U belongs.
func TestUpsertSourceExactlyOnceAcrossRestores(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	in, out := c.topic("in", 3), c.topic("out", 2)
	want := upsertInput(c, in, 3, 200, 16000)
	src, err := NewUpsertSource(func(k, v []byte) ([]any, error) { return []any{string(k), string(v)}, nil },
		Brokers(c.brokers), Topics(in), Bounded())
	if err != nil {
		t.Fatal(err)
	}
	sink, err := NewSink[event.Row](Brokers(c.brokers), Topic(out), Guarantee(delivery.ExactlyOnce),
		TransactionalIDPrefix(out), TransactionTimeout(time.Minute),
		KeyFunc(func(r event.Row) []byte { return []byte(r.Fields[0].(string)) }),
		Serializer(func(r event.Row) ([]byte, error) {
			return []byte(fmt.Sprintf("%s|%s|%s", r.Kind, r.Fields[0], r.Fields[1])), nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	env := weir.NewEnvironment().SetParallelism(2).EnableCheckpointing(50*time.Millisecond, weir.ExactlyOnce, t.TempDir())
	env.RuntimeOptions().Restart = runtime.FixedDelay{Attempts: 10}
	env.CheckpointOptions().TolerableFailures = -1
	// Four crashes, each at the first record after the second checkpoint
	// an attempt completes: the restores start from four different
	// checkpoints, with tables of different contents. (The copy test
	// covers a crash before the first checkpoint.)
	var restored []int64 // driver goroutine only; read after Execute
	var crashNext atomic.Bool
	var crashes atomic.Int32
	sinceRestart := 0
	// No limit on the whole run: under load it takes minutes. It fails
	// when two minutes pass without a checkpoint, restart or restore.
	ctx, progress := progressContext(t, 2*time.Minute)
	env.RuntimeOptions().Listener = func(e runtime.Event) {
		progress()
		switch e.Kind {
		case runtime.EventRestored:
			restored = append(restored, e.Checkpoint)
		case runtime.EventFailover:
			sinceRestart = 0
		case runtime.EventCheckpointCompleted:
			if sinceRestart++; sinceRestart == 2 && crashes.Load() < 4 {
				crashNext.Store(true)
			}
		}
	}
	var n atomic.Int64
	rows := weir.MapErr(weir.FromSource[event.Row](env, src, "in", weir.WithUID("upsert-in")), func(r event.Row) (event.Row, error) {
		if n.Add(1)%2 == 0 {
			time.Sleep(time.Millisecond) // about 4 s of work: checkpoints complete between the crashes
		}
		if crashNext.CompareAndSwap(true, false) {
			crashes.Add(1)
			return r, sim.ErrInjected
		}
		return r, nil
	}).UID("map")
	weir.SinkTo(rows, sink, "out").UID("changelog-out")
	res, err := env.Execute(ctx, "upsert-changelog")
	if err != nil {
		t.Fatalf("job failed: %v (%v)", err, context.Cause(ctx))
	}
	t.Logf("restarts %d, restored checkpoints %v", res.Restarts, restored)
	if distinct := len(slices.Compact(slices.Clone(restored))); res.Restarts < 4 || distinct < 4 {
		t.Fatalf("%d restarts, restored checkpoints %v; the test needs 4 restarts from different checkpoints",
			res.Restarts, restored)
	}
	j := &copyJob{c: c, out: out}
	got := map[string][]string{}
	for _, v := range j.output(t) {
		k := strings.Split(v, "|")[1]
		got[k] = append(got[k], v)
	}
	for k := range want {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("key %s: changelog\n got %v\nwant %v", k, got[k], want[k])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d keys in the output, want %d", len(got), len(want))
	}
}
