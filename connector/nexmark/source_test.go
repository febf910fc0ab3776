package nexmark_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/connector/nexmark"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/operator/sourcetest"
	"github.com/weirstream/weir/runtime"
)

// collector is a ReaderOutput that keeps what a reader emitted.
type collector struct {
	splits []string
	recs   []event.Record
}

func (c *collector) Collect(split string, r event.Record) {
	c.splits = append(c.splits, split)
	c.recs = append(c.recs, r)
}

func newSource(t *testing.T, cfg nexmark.Config) *nexmark.Source {
	t.Helper()
	s, err := nexmark.NewSource(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readers makes the n readers of a fresh job and hands each its splits.
func readers(t *testing.T, s *nexmark.Source, n int) []operator.SourceReader {
	t.Helper()
	splits, err := s.Enumerate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := make([]operator.SourceReader, n)
	for i := range out {
		if out[i], err = s.CreateReader(operator.ReaderContext{Parallelism: n}); err != nil {
			t.Fatal(err)
		}
		var mine []operator.SplitState
		for _, sp := range splits {
			if s.AssignSplit(sp.ID, n) == i {
				mine = append(mine, sp)
			}
		}
		if err := out[i].AddSplits(mine); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// drain polls r until it ends (or has emitted max records) and returns
// what it emitted.
func drain(t *testing.T, r operator.SourceReader, max int) *collector {
	t.Helper()
	c := &collector{}
	for len(c.recs) < max {
		st, err := r.Poll(c)
		if err != nil {
			t.Fatal(err)
		}
		if st == operator.EndOfInput {
			break
		}
		if st == operator.NothingAvailable {
			t.Fatal("an unlimited bounded source said NothingAvailable")
		}
	}
	return c
}

type key struct {
	split string
	k     int64
}

// The union of the readers' output, for any parallelism, is the stream:
// every (split, k) exactly once, equal to the event generated alone, with
// its dateTime as the record timestamp, in time order within a reader.
func TestReadersPartitionTheStream(t *testing.T) {
	s := newSource(t, nexmark.Config{EventsNum: 4003})
	g := s.Generator()
	for _, p := range []int{1, 2, 3, 8, 11} {
		seen := map[key]bool{}
		for i, r := range readers(t, s, p) {
			c := drain(t, r, 1<<30)
			next := map[string]int64{}
			prevTS := int64(0)
			for j, rec := range c.recs {
				id := c.splits[j]
				k := next[id]
				next[id]++
				split, _ := strconv.Atoi(id)
				ev := rec.Value.(nexmark.Event)
				if want := g.Event(split, k); !reflect.DeepEqual(ev, want) {
					t.Fatalf("p=%d reader %d: split %s k %d differs from the event made alone", p, i, id, k)
				}
				if rec.Timestamp != ev.DateTime().UnixMilli() || rec.Timestamp < prevTS {
					t.Fatalf("p=%d reader %d: timestamp %d (previous %d), event at %v", p, i, rec.Timestamp, prevTS, ev.DateTime())
				}
				prevTS = rec.Timestamp
				if seen[key{id, k}] {
					t.Fatalf("p=%d: split %s k %d emitted twice", p, id, k)
				}
				seen[key{id, k}] = true
			}
		}
		if len(seen) != 4003 {
			t.Fatalf("p=%d: %d events, want 4003", p, len(seen))
		}
	}
}

// A reader restored from a snapshot continues exactly where the snapshot
// was taken.
func TestSnapshotRestore(t *testing.T) {
	s := newSource(t, nexmark.Config{EventsNum: 2000})
	full := drain(t, readers(t, s, 1)[0], 1<<30)

	r := readers(t, s, 1)[0]
	first := drain(t, r, 700)
	snap, err := r.SnapshotState(1)
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := s.CreateReader(operator.ReaderContext{Parallelism: 1})
	if err := r2.AddSplits(snap); err != nil {
		t.Fatal(err)
	}
	rest := drain(t, r2, 1<<30)
	got := append(first.recs, rest.recs...)
	if len(got) != len(full.recs) {
		t.Fatalf("%d + %d events, want %d", len(first.recs), len(rest.recs), len(full.recs))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], full.recs[i]) {
			t.Fatalf("event %d differs after restore", i)
		}
	}
	if err := r2.AddSplits([]operator.SplitState{{ID: "9", Position: []byte{0}}}); err == nil {
		t.Fatal("accepted split 9 of 8")
	}
}

// With RateLimited the reader emits an event only once its event time,
// counted from the first poll, has come.
func TestRateLimited(t *testing.T) {
	// 1,000 events/s over 8 splits: each split's k-th event is at
	// trunc((k+1)·8000 µs) = 8(k+1) ms, so the first is due at once and one
	// more per split every 8 ms.
	s := newSource(t, nexmark.Config{EventsNum: 24, FirstEventRate: 1000, RateLimited: true})
	r := readers(t, s, 1)[0]
	start := time.Now()
	c := &collector{}
	var afterFirstPoll int
	for {
		st, err := r.Poll(c)
		if err != nil {
			t.Fatal(err)
		}
		if afterFirstPoll == 0 {
			afterFirstPoll = len(c.recs)
		}
		if st == operator.EndOfInput {
			break
		}
		if st == operator.NothingAvailable {
			select {
			case <-r.Available():
			case <-time.After(5 * time.Second):
				t.Fatal("Available never signalled")
			}
		}
	}
	if el := time.Since(start); len(c.recs) != 24 || afterFirstPoll != 8 || el < 15*time.Millisecond {
		t.Fatalf("%d events, %d at once, in %v; want 24, 8 at once, in ≥ 16 ms", len(c.recs), afterFirstPoll, el)
	}
}

func TestFromOptions(t *testing.T) {
	s, err := nexmark.FromOptions(map[string]string{
		"connector": "nexmark", "events.num": "1000", "first-event.rate": "5000", "next-event.rate": "5000",
		"person.proportion": "2", "auction.proportion": "3", "bid.proportion": "45", "bid.avg-size": "1kb",
		"max-emit-speed": "false", "base-time": "2020-01-01T00:00:00Z",
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.Generator().Config()
	want := nexmark.Config{EventsNum: 1000, FirstEventRate: 5000, NextEventRate: 5000, PersonProportion: 2, AuctionProportion: 3,
		BidProportion: 45, AvgPersonSize: 200, AvgAuctionSize: 500, AvgBidSize: 1024, HotAuctionRatio: 2, HotBiddersRatio: 4,
		HotSellersRatio: 4, NumInFlightAuctions: 100, NumActivePeople: 1000, Splits: 8, BaseTime: 1577836800000, RateLimited: true}
	if cfg != want || !s.Bounded() {
		t.Fatalf("config\n got %+v\nwant %+v", cfg, want)
	}
	if s, _ := nexmark.FromOptions(map[string]string{"tps": "777"}); s.Generator().Config().FirstEventRate != 777 || s.Bounded() {
		t.Fatal("tps is first-event.rate; no events.num is unbounded")
	}
	for _, bad := range []map[string]string{
		{"events.nmu": "1"},
		{"events.num": "x"},
		{"first-event.rate": "100", "next-event.rate": "200"},
		{"connector": "datagen"},
		{"splits": "0", "events.num": "-1"},
	} {
		if _, err := nexmark.FromOptions(bad); !errors.Is(err, nexmark.ErrConfig) {
			t.Fatalf("options %v: error %v, want ErrConfig", bad, err)
		}
	}
}

// countSink counts events by type and checks record timestamps.
type countSink struct {
	mu     sync.Mutex
	counts [3]int
	badTS  int
}

func (c *countSink) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return countWriter{c}, nil
}
func (c *countSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

type countWriter struct{ c *countSink }

func (w countWriter) Write(r event.Record) error {
	ev := r.Value.(nexmark.Event)
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	w.c.counts[ev.Type]++
	if r.Timestamp != ev.DateTime().UnixMilli() {
		w.c.badTS++
	}
	return nil
}
func (countWriter) Flush(bool) error                                   { return nil }
func (countWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (countWriter) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (countWriter) Close() error                                       { return nil }

// A job on the real runtime, parallelism 2, checkpointing, with the
// generator's watermarks: every event arrives once.
func TestRunOnRuntime(t *testing.T) {
	const n = 50000
	src := newSource(t, nexmark.Config{EventsNum: n})
	env := weir.NewEnvironment().SetParallelism(2).EnableCheckpointing(20*time.Millisecond, weir.ExactlyOnce, t.TempDir())
	env.RuntimeOptions().Restart = runtime.NoRestart{}
	events := weir.FromSource[nexmark.Event](env, src, "nexmark",
		weir.WithWatermarks(weir.BoundedOutOfOrderness(4*time.Second), func(e nexmark.Event) int64 { return e.DateTime().UnixMilli() }))
	sink := &countSink{}
	weir.SinkTo(weir.Filter(events, func(nexmark.Event) bool { return true }), sink, "count")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := env.Execute(ctx, t.Name()); err != nil {
		t.Fatal(err)
	}
	// 50,000 events in 8 splits of 6,250, with ids 1+6250i+1 … : every
	// window of 50 consecutive ids holds 1 person, 3 auctions and 46 bids;
	// count the remainder directly.
	var want [3]int
	g := src.Generator()
	for s := range g.Splits() {
		for k := range g.SplitLen(s) {
			want[g.Event(s, k).Type]++
		}
	}
	if sink.counts != want || sink.badTS != 0 {
		t.Fatalf("counts %v (%d bad timestamps), want %v", sink.counts, sink.badTS, want)
	}
	if want[0]+want[1]+want[2] != n || want[0] != n/50 || want[1] != 3*n/50 {
		t.Fatalf("generator counts %v", want)
	}
}

// eventLine formats an event for sourcetest.Output: its type and id.
func eventLine(v any) string {
	ev := v.(nexmark.Event)
	switch {
	case ev.Person != nil:
		return "person " + strconv.FormatInt(ev.Person.ID, 10)
	case ev.Auction != nil:
		return "auction " + strconv.FormatInt(ev.Auction.ID, 10)
	}
	return "bid on " + strconv.FormatInt(ev.Bid.Auction, 10)
}

// A reader reports each split finished right after its last event, also a
// split restored at its end, which it reports before any other output.
func TestReaderReportsFinishedSplits(t *testing.T) {
	// 10 events over 4 splits: splits 0-2 hold 2 events each, split 3 four;
	// the reader takes one event of each split in turn.
	s := newSource(t, nexmark.Config{EventsNum: 10, Splits: 4})
	r := readers(t, s, 1)[0]
	got := sourcetest.Drain(t, r, &sourcetest.Output{Value: eventLine})
	want := []string{
		"0: auction 1001 @1704067200000", "1: bid on 1000 @1704067200000",
		"2: bid on 1000 @1704067200000", "3: bid on 1008 @1704067200000",
		"0: auction 1002 @1704067200000", "finished 0",
		"1: bid on 1000 @1704067200000", "finished 1",
		"2: bid on 1000 @1704067200000", "finished 2",
		"3: bid on 1000 @1704067200000", "3: bid on 1000 @1704067200001", "3: bid on 1000 @1704067200001", "finished 3",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("reader output:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	r2 := sourcetest.Open(t, s, []operator.SplitState{{ID: "0", Position: binary.AppendUvarint(nil, 2)},
		{ID: "3", Position: binary.AppendUvarint(nil, 3)}})
	got = sourcetest.Drain(t, r2, &sourcetest.Output{Value: eventLine})
	if want := []string{"finished 0", "3: bid on 1000 @1704067200001", "finished 3"}; !slices.Equal(got, want) {
		t.Fatalf("restored reader output %q, want %q", got, want)
	}
}

// The row source (Rows) emits what the event source emits, each event as
// the +I row of its Row(), with the same splits, timestamps, order and
// finished splits; its rows are independent of one another.
func TestRowsSourceEmitsEventRows(t *testing.T) {
	cfg := nexmark.Config{EventsNum: 3000, Splits: 4}
	s := newSource(t, cfg)
	events := drain(t, readers(t, s, 1)[0], 1<<20)
	rows := drain(t, readers(t, s.Rows(), 1)[0], 1<<20)
	if len(rows.recs) != 3000 || len(events.recs) != 3000 {
		t.Fatalf("%d rows and %d events, want 3000 each", len(rows.recs), len(events.recs))
	}
	kinds := map[int]int{}
	for i, ev := range events.recs {
		e := ev.Value.(nexmark.Event)
		kinds[e.Type]++
		want := event.Row{Kind: event.Insert, Fields: e.Row()}
		got, ok := rows.recs[i].Value.(event.Row)
		if !ok || !reflect.DeepEqual(got, want) || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("record %d: row %v (%T), want %v", i, rows.recs[i].Value, rows.recs[i].Value, want)
		}
		if rows.splits[i] != events.splits[i] || rows.recs[i].Timestamp != ev.Timestamp {
			t.Fatalf("record %d: split %s @%d, want split %s @%d", i, rows.splits[i], rows.recs[i].Timestamp, events.splits[i], ev.Timestamp)
		}
	}
	if kinds[nexmark.PersonEvent] == 0 || kinds[nexmark.AuctionEvent] == 0 || kinds[nexmark.BidEvent] == 0 {
		t.Fatalf("events by type %v: want every type", kinds)
	}
	// Overwriting one row's fields, its entity's and appending to either
	// leaves every other row as generated.
	r := rows.recs[7].Value.(event.Row).Fields
	entity := r[r[0].(int64)+1].([]any)
	_ = append(r, "x")
	_ = append(entity, "y")
	entity[0], r[0] = "changed", "changed"
	for i, ev := range events.recs {
		if i != 7 && !reflect.DeepEqual(rows.recs[i].Value.(event.Row).Fields, ev.Value.(nexmark.Event).Row()) {
			t.Fatalf("row %d changed by writing row 7", i)
		}
	}
	got := sourcetest.Drain(t, readers(t, newSource(t, nexmark.Config{EventsNum: 10, Splits: 4}).Rows(), 1)[0], &sourcetest.Output{})
	if n := len(slices.DeleteFunc(got, func(l string) bool { return !strings.HasPrefix(l, "finished ") })); n != 4 {
		t.Fatalf("the row source reported %d finished splits, want 4: %q", n, got)
	}
}
