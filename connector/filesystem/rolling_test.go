package filesystem

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// TestRollingPolicy writes rows at given processing times (seconds after
// t0) within one checkpoint and checks which rows share a part file after
// the commit: files roll by size, by age and by inactivity (checked at
// most every check interval), and stay hidden until the checkpoint.
func TestRollingPolicy(t *testing.T) {
	type row struct {
		at   int // seconds after t0
		line string
	}
	for _, c := range []struct {
		name   string
		policy RollingPolicy
		rows   []row
		want   string // files' contents, sorted, separated by |
	}{
		{"none: one file per checkpoint", RollingPolicy{}, []row{{0, "1,a"}, {100, "2,b"}, {200, "3,c"}}, "1,a 2,b 3,c"},
		{"file-size 8 bytes", RollingPolicy{FileSize: 8}, []row{{0, "1,a"}, {0, "2,b"}, {0, "3,c"}, {0, "4,d"}, {0, "5,e"}},
			"1,a 2,b|3,c 4,d|5,e"},
		{"rollover-interval 60 s, checked every 60 s", RollingPolicy{RolloverInterval: time.Minute, CheckInterval: time.Minute},
			[]row{{0, "1,a"}, {30, "2,b"}, {59, "3,c"}, {60, "4,d"}, {61, "5,e"}, {119, "6,f"}, {120, "7,g"}},
			"1,a 2,b 3,c|4,d 5,e 6,f|7,g"},
		{"inactivity-interval 10 s", RollingPolicy{InactivityInterval: 10 * time.Second},
			[]row{{0, "1,a"}, {9, "2,b"}, {19, "3,c"}, {20, "4,d"}}, "1,a 2,b|3,c 4,d"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
			now := t0
			s := &Sink{Dir: dir, Format: &format.CSV{Fields: schema, Delimiter: ','}, Rolling: c.policy,
				Now: func() time.Time { return now }}
			wc := operator.WriterContext{Subtask: event.SubtaskID{Index: 0}, Parallelism: 1}
			w, err := s.CreateWriter(wc)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range c.rows {
				now = t0.Add(time.Duration(r.at) * time.Second)
				id, name, _ := strings.Cut(r.line, ",")
				if err := w.Write(event.Record{Value: event.Row{Kind: event.Insert, Fields: []any{mustInt(t, id), name}}}); err != nil {
					t.Fatal(err)
				}
			}
			if visible := readFiles(t, dir); visible != "" {
				t.Fatalf("before the checkpoint, visible: %q", visible)
			}
			cs, err := w.PrepareCommit(1)
			if err != nil {
				t.Fatal(err)
			}
			cm, _ := s.CreateCommitter(wc)
			if err := cm.Commit(context.Background(), 1, cs); err != nil {
				t.Fatal(err)
			}
			if got := readFiles(t, dir); got != c.want {
				t.Fatalf("files %q, want %q", got, c.want)
			}
		})
	}
}

// readFiles returns the visible files' lines, each file's joined by a
// space, the files sorted and joined by |; hidden files are skipped.
func readFiles(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(dir + "/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, strings.Join(strings.Fields(string(data)), " "))
	}
	slices.Sort(files)
	return strings.Join(files, "|")
}
