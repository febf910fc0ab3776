package datagen

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/operator/sourcetest"
	"github.com/weirstream/weir/types"
)

var schema = []types.Field{
	{Name: "id", Type: types.Type{Kind: types.BigInt}},
	{Name: "name", Type: types.Type{Kind: types.String, Nullable: true}},
	{Name: "score", Type: types.Type{Kind: types.Int, Nullable: true}},
}

type collector struct{ rows [][]any }

func (c *collector) Collect(_ string, r event.Record) {
	c.rows = append(c.rows, r.Value.(event.Row).Fields)
}

func drain(t *testing.T, s *Source, readers int) [][]any {
	t.Helper()
	splits, _ := s.Enumerate(context.Background())
	c := &collector{}
	for i := 0; i < readers; i++ {
		r, _ := s.CreateReader(operator.ReaderContext{Parallelism: readers})
		var mine []operator.SplitState
		for _, sp := range splits {
			if s.AssignSplit(sp.ID, readers) == i {
				mine = append(mine, sp)
			}
		}
		if err := r.AddSplits(mine); err != nil {
			t.Fatal(err)
		}
		for {
			st, err := r.Poll(c)
			if err != nil {
				t.Fatal(err)
			}
			if st == operator.EndOfInput {
				break
			}
		}
	}
	return c.rows
}

func TestSequenceBoundsAndDeterminism(t *testing.T) {
	s, err := FromOptions(schema, map[string]string{"rows-per-second": "0",
		"fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "100",
		"fields.name.length": "5", "fields.score.min": "10", "fields.score.max": "20"})
	if err != nil {
		t.Fatal(err)
	}
	rows := drain(t, s, 3)
	if len(rows) != 100 {
		t.Fatalf("%d rows, want 100", len(rows))
	}
	var ids []int
	for _, r := range rows {
		ids = append(ids, int(r[0].(int64)))
		if sc := r[2].(int64); sc < 10 || sc > 20 {
			t.Fatalf("score %d outside [10,20]", sc)
		}
		if len(r[1].(string)) != 5 {
			t.Fatalf("name %q not of length 5", r[1])
		}
	}
	sort.Ints(ids)
	for i, id := range ids {
		if id != i+1 {
			t.Fatalf("ids %v are not exactly 1..100", ids)
		}
	}
	if fmt.Sprint(s.Row(42)) != fmt.Sprint(s.Row(42)) {
		t.Fatal("row 42 differs between calls")
	}
}

func TestOptionErrorsNameTheOption(t *testing.T) {
	_, err := FromOptions(schema, map[string]string{"fields.id.kind": "counter"})
	if err == nil || !strings.Contains(err.Error(), "fields.id.kind") {
		t.Fatalf("error %v", err)
	}
	_, err = FromOptions(schema, map[string]string{"number-of-rows": "-1"})
	if err == nil || !strings.Contains(err.Error(), "number-of-rows") {
		t.Fatalf("error %v", err)
	}
}

// A bounded source's reader reports each split finished right after its
// last row, and a split with no rows left when it comes to it (here: one
// restored at its end) without any.
func TestReaderReportsFinishedSplits(t *testing.T) {
	// Ids 1..6 over the 4 splits: split i holds rows i and i+4, emitted in
	// row order.
	s, err := FromOptions(schema[:1], map[string]string{"rows-per-second": "0",
		"fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "6"})
	if err != nil {
		t.Fatal(err)
	}
	got := sourcetest.Drain(t, sourcetest.Open(t, s, nil), &sourcetest.Output{})
	want := []string{
		"0: +I[1]", "1: +I[2]", "2: +I[3]", "finished 2",
		"3: +I[4]", "finished 3", "0: +I[5]", "finished 0",
		"1: +I[6]", "finished 1",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("reader output:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	// Restored after rows 1 and 5: split 0 is at its end, split 1 not.
	restored := sourcetest.Open(t, s, []operator.SplitState{{ID: "0", Position: binary.AppendUvarint(nil, 8)},
		{ID: "1", Position: binary.AppendUvarint(nil, 1)}})
	got = sourcetest.Drain(t, restored, &sourcetest.Output{})
	if want := []string{"finished 0", "1: +I[2]", "1: +I[6]", "finished 1"}; !slices.Equal(got, want) {
		t.Fatalf("restored reader output %q, want %q", got, want)
	}
}

// One reader of every split emits a sequence in order, as Flink's datagen
// at parallelism 1 does, and so every split advances: a reader that drained
// one split before starting the next held the source's watermark (the
// minimum over its splits) at its start until the last split began, and
// for ever on an unbounded source, so event-time windows over datagen did
// not fire while it ran. Also after a restore at uneven positions.
func TestReaderEmitsRowsInOrder(t *testing.T) {
	s, err := FromOptions(schema[:1], map[string]string{"rows-per-second": "0",
		"fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.end": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	got := pollN(t, sourcetest.Open(t, s, nil), 10)
	want := []string{"0: +I[1]", "1: +I[2]", "2: +I[3]", "3: +I[4]", "0: +I[5]",
		"1: +I[6]", "2: +I[7]", "3: +I[8]", "0: +I[9]", "1: +I[10]"}
	if !slices.Equal(got, want) {
		t.Fatalf("reader output %q, want %q", got, want)
	}

	// Restored with split 2 behind the others: it catches up first.
	pos := func(id string, n uint64) operator.SplitState {
		return operator.SplitState{ID: id, Position: binary.AppendUvarint(nil, n)}
	}
	got = pollN(t, sourcetest.Open(t, s, []operator.SplitState{pos("0", 12), pos("1", 13), pos("2", 2), pos("3", 11)}), 6)
	want = []string{"2: +I[3]", "2: +I[7]", "2: +I[11]", "3: +I[12]", "0: +I[13]", "1: +I[14]"}
	if !slices.Equal(got, want) {
		t.Fatalf("restored reader output %q, want %q", got, want)
	}
}

// pollN polls r n times, each expected to give MoreAvailable, and returns
// what it emitted.
func pollN(t *testing.T, r operator.SourceReader, n int) []string {
	t.Helper()
	out := &sourcetest.Output{}
	for range n {
		if st, err := r.Poll(out); err != nil || st != operator.MoreAvailable {
			t.Fatalf("Poll = %v, %v; want MoreAvailable", st, err)
		}
	}
	return out.Lines
}

// An unbounded source's splits never finish.
func TestUnboundedReaderFinishesNothing(t *testing.T) {
	s, err := FromOptions(schema[:1], map[string]string{"rows-per-second": "0"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range pollN(t, sourcetest.Open(t, s, nil), 100) {
		if strings.HasPrefix(l, "finished") {
			t.Fatalf("an unbounded reader reported %q", l)
		}
	}
}

// max-past takes Flink's duration syntax (package duration), as every other
// duration option: a timestamp column's values lie in [now - max-past, now].
func TestMaxPastReadsFlinkDurations(t *testing.T) {
	ts := []types.Field{{Name: "ts", Type: types.Type{Kind: types.Timestamp, Precision: 3}}}
	s, err := FromOptions(ts, map[string]string{"fields.ts.max-past": "2 min"})
	if err != nil {
		t.Fatal(err)
	}
	if s.fields[0].maxPast != 2*time.Minute {
		t.Fatalf("max-past %v, want 2m0s", s.fields[0].maxPast)
	}
	for n := int64(0); n < 100; n++ {
		v := s.Row(n)[0].(time.Time)
		if v.Before(s.now.Add(-2*time.Minute)) || v.After(s.now) {
			t.Fatalf("row %d: %v outside [now-2m, now] (now %v)", n, v, s.now)
		}
	}
	_, err = FromOptions(ts, map[string]string{"fields.ts.max-past": "2 fortnights"})
	if err == nil || !strings.Contains(err.Error(), "fields.ts.max-past") {
		t.Fatalf("error %v, want one naming fields.ts.max-past", err)
	}
}
