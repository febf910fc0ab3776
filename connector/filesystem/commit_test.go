package filesystem

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
)

// TestPartitionCommitTrigger steps the commit state machine: each step
// writes into partitions and/or asks which are ready at a watermark and a
// processing time, as the writer does at each barrier.
func TestPartitionCommitTrigger(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	ms := func(s string) event.Timestamp {
		x, err := time.Parse("2006-01-02 15:04:05.000", s)
		if err != nil {
			t.Fatal(err)
		}
		return x.UnixMilli()
	}
	type step struct {
		write []string // "dt/hm" partitions written now
		wm    event.Timestamp
		now   time.Duration // after t0
		end   bool
		ready string
	}
	pt := &CommitPolicy{Trigger: TriggerPartitionTime, Delay: time.Minute, Zone: time.UTC,
		Extractor: &TimeExtractor{Cols: []string{"dt", "hm"}, Pattern: "$dt $hm:00"}}
	proc := &CommitPolicy{Trigger: TriggerProcessTime, Delay: time.Minute}
	for _, c := range []struct {
		name   string
		policy *CommitPolicy
		steps  []step
	}{
		{"partition-time waits for watermark > time + delay", pt, []step{
			{write: []string{"2024-01-01/10:00", "2024-01-01/10:01"}, wm: ms("2024-01-01 10:00:59.999")},
			{wm: ms("2024-01-01 10:01:00.000")}, // equal is not past: Flink commits at watermark > time + delay
			{wm: ms("2024-01-01 10:01:00.001"), ready: "dt=2024-01-01/hm=10%3A00"},
			{write: []string{"2024-01-01/10:00"}, wm: ms("2024-01-01 10:01:00.001"), ready: "dt=2024-01-01/hm=10%3A00"}, // a late row: commits again
			{wm: ms("2024-01-01 10:05:00.000"), ready: "dt=2024-01-01/hm=10%3A01"},
			{wm: ms("2024-01-01 10:09:00.000")},
		}},
		{"end of input commits everything", pt, []step{
			{write: []string{"2024-01-01/10:00", "2024-01-02/00:00"}, wm: ms("2024-01-01 10:00:00.000")},
			{end: true, ready: "dt=2024-01-01/hm=10%3A00 dt=2024-01-02/hm=00%3A00"},
		}},
		{"process-time: creation + delay", proc, []step{
			{write: []string{"a/b"}, now: 0},
			{write: []string{"c/d"}, now: 30 * time.Second},
			{now: time.Minute},
			{now: time.Minute + time.Millisecond, ready: "dt=a/hm=b"},
			{now: 90*time.Second + time.Millisecond, ready: "dt=c/hm=d"},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pc := PartitionCommits{Policy: c.policy}
			for i, s := range c.steps {
				for _, p := range s.write {
					vals := strings.Split(p, "/")
					if err := pc.Written(partitionDir([]string{"dt", "hm"}, vals), vals, t0.Add(s.now)); err != nil {
						t.Fatal(err)
					}
				}
				got := strings.Join(pc.Ready(s.wm, t0.Add(s.now), s.end), " ")
				if got != s.ready {
					t.Fatalf("step %d: ready %q, want %q", i, got, s.ready)
				}
			}
		})
	}
}

// TestPartitionCommitsRestore: the pending partitions survive a snapshot
// and restore, keeping their due time.
func TestPartitionCommitsRestore(t *testing.T) {
	p := &CommitPolicy{Trigger: TriggerProcessTime, Delay: time.Second}
	a := PartitionCommits{Policy: p}
	t0 := time.UnixMilli(1000)
	if err := a.Written("k=1", []string{"1"}, t0); err != nil {
		t.Fatal(err)
	}
	b, err := a.encode()
	if err != nil {
		t.Fatal(err)
	}
	r := PartitionCommits{Policy: p}
	if err := r.restore(b); err != nil {
		t.Fatal(err)
	}
	if got := r.Ready(0, t0.Add(time.Second), false); len(got) != 0 {
		t.Fatalf("ready at creation + delay: %v", got)
	}
	if got := fmt.Sprint(r.Ready(0, t0.Add(time.Second+time.Millisecond), false)); got != "[k=1]" {
		t.Fatalf("ready after restore = %s, want [k=1]", got)
	}
}

func TestTimeExtractor(t *testing.T) {
	for _, c := range []struct {
		pattern, formatter string
		values             []string
		want, err          string
	}{
		{"$dt $hm:00", "", []string{"2024-01-01", "10:15"}, "2024-01-01 10:15:00", ""},
		{"", "", []string{"2024-01-01", "x"}, "2024-01-01 00:00:00", ""},
		{"$dt", "yyyyMMdd", []string{"20240102", "x"}, "2024-01-02 00:00:00", ""},
		{"$dt $hm", "yyyy-MM-dd HH", []string{"2024-01-02", "07"}, "2024-01-02 07:00:00", ""},
		{"$dt", "", []string{"__DEFAULT_PARTITION__", "x"}, "",
			`partition time "__DEFAULT_PARTITION__" does not parse as 'partition.time-extractor.timestamp-formatter' (2006-01-02 15:04:05.999999999)`},
	} {
		layout := ""
		if c.formatter != "" {
			var err error
			if layout, err = JavaLayout(c.formatter); err != nil {
				t.Fatal(err)
			}
		}
		x := &TimeExtractor{Cols: []string{"dt", "hm"}, Pattern: c.pattern, Layout: layout}
		got, err := x.Extract(c.values)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q %v: error %v, want %s", c.pattern, c.values, err, c.err)
			}
			continue
		}
		if err != nil || got.Format("2006-01-02 15:04:05") != c.want {
			t.Errorf("%q %v = %v, %v; want %s", c.pattern, c.values, got, err, c.want)
		}
	}
	if err := CheckPattern("$dt $hour:00", []string{"dt", "hm"}); err == nil ||
		err.Error() != "'partition.time-extractor.timestamp-pattern' = '$dt $hour:00': $hour is not a partition column (partition columns: dt, hm)" {
		t.Errorf("CheckPattern: %v", err)
	}
	if _, err := JavaLayout("yyyy-MM-dd'T'HH"); err == nil {
		t.Error("JavaLayout accepted a quoted literal")
	}
}
