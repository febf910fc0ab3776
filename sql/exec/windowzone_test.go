package exec

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// wall is the local milliseconds of a wall-clock time.
func wall(s string) int64 {
	t, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

// TestWindowZoneTimers checks the instants windows fire at against the
// examples of Flink's TimeWindowUtil.toEpochMillsForTimer for Los Angeles:
// an end in the skipped hour of 2021-03-14 fires at 03:00 PDT, an end in
// the repeated hour of 2021-11-07 at its second occurrence.
func TestWindowZoneTimers(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	z := newWindowZone(la)
	if !z.dst {
		t.Fatal("Los Angeles observes daylight saving time")
	}
	for _, c := range []struct {
		local string
		want  int64
	}{
		{"2021-03-14 00:00:00", 1615708800000},
		{"2021-03-14 01:00:00", 1615712400000},
		{"2021-03-14 02:00:00", 1615716000000},
		{"2021-03-14 02:59:59", 1615716000000},
		{"2021-03-14 03:00:00", 1615716000000},
		{"2021-11-07 00:00:00", 1636268400000},
		{"2021-11-07 01:00:00", 1636275600000},
		{"2021-11-07 02:00:00", 1636279200000},
	} {
		if got := z.timer(wall(c.local)); got != c.want {
			t.Errorf("timer(%s) = %d, want %d", c.local, got, c.want)
		}
	}
	if got, want := z.local(1615716000000), wall("2021-03-14 03:00:00"); got != want {
		t.Errorf("local(epoch3) = %d, want %d", got, want)
	}
	if z := newWindowZone(time.UTC); z.timer(5) != 5 || z.local(5) != 5 {
		t.Error("UTC shifts")
	}
}

// TestWindowAggregateZoneRestores: hourly windows in Los Angeles across
// the spring-forward gap, with restores between any two steps: the same
// windows, wall-clock bounds and window_time instants as without.
func TestWindowAggregateZoneRestores(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	opts := WindowAggOptions{Window: WindowSpec{Kind: Tumble, Size: 2 * time.Hour}, TimeField: 1, GroupKeys: []int{0},
		Aggs: []AggCall{{Kind: CountStar}}, WindowTime: true, Zone: la}
	mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewWindowAggregate(opts) })}
	var steps []step
	for i, ms := range []int64{1615708800000, 1615712400000, 1615716000000, 1615719600000, 1615723200000} {
		steps = append(steps, step{input: 1, row: event.Row{Kind: event.Insert, Fields: []any{"k", time.UnixMilli(ms).UTC()}}})
		steps = append(steps, step{wm: ms - int64(i%2)})
	}
	steps = append(steps, step{wm: event.MaxWatermark})
	lines, rows := runSteps(t, mk, steps, nil)
	got := windowLines(rows)
	// [00:00, 02:00) local holds 00:00 and 01:00; [02:00, 04:00) holds
	// 03:00 PDT only (02:00 was skipped) and fires at the instant of
	// 03:59:59.999 PDT; [04:00, 06:00) holds 04:00 and 05:00.
	want := fmt.Sprint([]string{"00:00-02:00 1615715999999 2", "02:00-04:00 1615719599999 1", "04:00-06:00 1615726799999 2"})
	if fmt.Sprint(got) != want {
		t.Fatalf("got %v\nwant %s", got, want)
	}
	checkRestartsChangeNothing(t, rand.New(rand.NewSource(1)), mk, steps, lines)
}

// TestWindowTableFunctionZone: the TVF on its own in Los Angeles emits a
// HOP row once per window, bounds in the zone's wall clock, window_time
// the instant of the window's last millisecond (toEpochMills: in the
// repeated hour of 2021-11-07 its first occurrence), and drops a row
// without a time.
func TestWindowTableFunctionZone(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	opts := WindowTableFunctionOptions{Window: WindowSpec{Kind: Hop, Slide: time.Hour, Size: 2 * time.Hour}, TimeField: 1, Zone: la}
	mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewWindowTableFunction(opts) })}
	var steps []step
	for i, ms := range []any{time.UnixMilli(1636273800000).UTC(), nil, time.UnixMilli(1636277400000).UTC()} {
		steps = append(steps, step{input: 1, row: event.Row{Kind: event.Insert, Fields: []any{int64(i + 1), ms}}})
	}
	_, rows := runSteps(t, mk, steps, nil)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprint(r.Fields[0], " ", time.UnixMilli(timeMs(r.Fields[2])).UTC().Format("15:04"), "-",
			time.UnixMilli(timeMs(r.Fields[3])).UTC().Format("15:04"), " ", timeMs(r.Fields[4])))
	}
	// 08:30 UTC is 01:30 PDT and 09:30 UTC 01:30 PST: the same wall
	// clock, so the same windows [01:00, 03:00) and [00:00, 02:00).
	// 01:59:59.999 is 08:59:59.999 UTC (PDT, the first occurrence);
	// 02:59:59.999 is PST, 10:59:59.999 UTC. Row 2 has no time.
	want := fmt.Sprint([]string{"1 01:00-03:00 1636282799999", "1 00:00-02:00 1636275599999",
		"3 01:00-03:00 1636282799999", "3 00:00-02:00 1636275599999"})
	if fmt.Sprint(got) != want {
		t.Fatalf("got %v\nwant %s", got, want)
	}
}

// TestWindowRankZoneRestores: a window Top-1 over hourly windows in Los
// Angeles across the repeated hour of 2021-11-07, with restores between
// any two steps: the repeated hour's window fires only after its second
// occurrence, so the row of 01:30 PST is ranked in it, not dropped late.
func TestWindowRankZoneRestores(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	spec := WindowSpec{Kind: Tumble, Size: time.Hour}
	opts := WindowRankOptions{Window: WindowRows{Assign: &spec, TimeField: 1, Zone: la},
		OrderBy: []SortKey{{Field: 2, Desc: true}}, RankStart: 1, RankEnd: 1}
	mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewWindowRank(opts) })}
	var steps []step
	for i, ms := range []int64{1636273800000, 1636277400000, 1636281000000} {
		steps = append(steps, step{input: 1, row: event.Row{Kind: event.Insert, Fields: []any{"k", time.UnixMilli(ms).UTC(), int64(i + 1)}}})
		steps = append(steps, step{wm: ms})
	}
	steps = append(steps, step{wm: event.MaxWatermark})
	lines, rows := runSteps(t, mk, steps, nil)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprint(r.Fields[2], " ", time.UnixMilli(timeMs(r.Fields[3])).UTC().Format("15:04")))
	}
	if want := "[2 01:00 3 02:00]"; fmt.Sprint(got) != want {
		t.Fatalf("got %v, want %s", got, want)
	}
	checkRestartsChangeNothing(t, rand.New(rand.NewSource(1)), mk, steps, lines)
}

// TestSessionAggregateZoneRestores: 30-minute sessions in Los Angeles
// across the repeated hour of 2021-11-07, with restores between any two
// steps: 01:30 PDT and 01:30 PST are one local time, so one session,
// which ends (and carries the rowtime) at the second 01:59:59.999.
func TestSessionAggregateZoneRestores(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	opts := SessionAggOptions{Gap: 30 * time.Minute, TimeField: 1, GroupKeys: []int{0}, Aggs: []AggCall{{Kind: CountStar}}, Zone: la}
	mk := []newStage{keyedStage(func() (operator.Operator, error) { return NewSessionAggregate(opts) })}
	var steps []step
	for _, ms := range []int64{1636273800000, 1636277400000, 1636281000000} {
		steps = append(steps, step{input: 1, row: event.Row{Kind: event.Insert, Fields: []any{"k", time.UnixMilli(ms).UTC()}}})
		steps = append(steps, step{wm: ms})
	}
	steps = append(steps, step{wm: event.MaxWatermark})
	lines, rows := runSteps(t, mk, steps, nil)
	got := windowLines(rows)
	want := fmt.Sprint([]string{"01:30-02:00 1636279199999 2", "02:30-03:00 1636282799999 1"})
	if fmt.Sprint(got) != want {
		t.Fatalf("got %v\nwant %s", got, want)
	}
	checkRestartsChangeNothing(t, rand.New(rand.NewSource(1)), mk, steps, lines)
}

// windowLines shows rows [key, start, end, rowtime, count] as
// "15:04-16:04 rowtime-ms count".
func windowLines(rows []event.Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprint(time.UnixMilli(timeMs(r.Fields[1])).UTC().Format("15:04"), "-",
			time.UnixMilli(timeMs(r.Fields[2])).UTC().Format("15:04"), " ", timeMs(r.Fields[3]), " ", r.Fields[4]))
	}
	return out
}

// TestWindowTableFunctionProcTime: over processing time each row falls in
// the windows of the moment it arrives (its own time field is not read,
// NULL or not), in the zone's wall clock; window_time is the instant of
// the window's last millisecond.
func TestWindowTableFunctionProcTime(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	for _, tc := range []struct {
		zone *time.Location
		want []string
	}{
		// 08:30 UTC (01:30 PDT) and 09:59:59.999 UTC: [08:00, 10:00) UTC in both; 10:00 UTC starts the next.
		{nil, []string{"1 08:00-10:00 1636279199999", "2 08:00-10:00 1636279199999", "3 10:00-12:00 1636286399999"}},
		// in Los Angeles the same instants are 01:30 PDT, 01:59:59.999 PST and 02:00 PST: [00:00, 02:00) local
		// holds both occurrences of 01:xx; window_time 01:59:59.999 local is its first occurrence (PDT).
		{la, []string{"1 00:00-02:00 1636275599999", "2 00:00-02:00 1636275599999", "3 02:00-04:00 1636286399999"}},
	} {
		opts := WindowTableFunctionOptions{Window: WindowSpec{Kind: Tumble, Size: 2 * time.Hour}, TimeField: -1, ProcTime: true, Zone: tc.zone}
		clock := int64(0)
		c := openChain(t, []newStage{keyedStage(func() (operator.Operator, error) { return NewWindowTableFunction(opts) })}, &clock, nil)
		for i, now := range []int64{1636273800000, 1636279199999, 1636279200000} {
			clock = now
			if err := c.process(t, 1, event.Record{Value: event.Row{Kind: event.Insert, Fields: []any{int64(i + 1), nil}}, Timestamp: event.NoTimestamp}); err != nil {
				t.Fatal(err)
			}
		}
		c.finish(t)
		var got []string
		for _, r := range c.out.rows() {
			got = append(got, fmt.Sprint(r.Fields[0], " ", time.UnixMilli(timeMs(r.Fields[2])).UTC().Format("15:04"), "-",
				time.UnixMilli(timeMs(r.Fields[3])).UTC().Format("15:04"), " ", timeMs(r.Fields[4])))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Fatalf("zone %v: got %v\nwant %v", tc.zone, got, tc.want)
		}
	}
}
