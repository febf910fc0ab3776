package window

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/weirstream/weir/keygroup"
)

// TestDataDriven runs the scripts in testdata against one operator driven
// directly. Commands:
//
//	new assigner=(tumbling|sliding|session) [size=MS] [slide=MS] [offset=MS] [gap=MS]
//	    fn=(sum|avg|list) [lateness=MS] [late=TAG]
//	elements            input: one "key:n@ts" a line
//	watermark TS
//	restore             snapshot, write, and continue on a fresh operator
//	metrics
//
// elements, watermark and restore print what the operator emitted.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &script{}
		datadriven.RunTest(t, path, s.run)
	})
}

type script struct {
	opts Options
	in   *instance
}

var allKeyGroups = keygroup.Range{Start: 0, End: maxPar - 1}

func (s *script) run(t *testing.T, td *datadriven.TestData) string {
	switch td.Cmd {
	case "new":
		s.opts = scanOptions(t, td)
		s.in = openInstance(t, s.opts, allKeyGroups, nil)
		return "ok\n"
	case "elements":
		for _, line := range strings.Fields(td.Input) {
			v, ts, ok := strings.Cut(line, "@")
			n, err := strconv.ParseInt(ts, 10, 64)
			if !ok || err != nil {
				td.Fatalf(t, "bad element %q; want key:n@ts", line)
			}
			s.in.element(t, v, n)
		}
	case "watermark":
		n, err := strconv.ParseInt(td.CmdArgs[0].Key, 10, 64)
		if err != nil {
			td.Fatalf(t, "bad watermark: %v", err)
		}
		s.in.watermark(t, n)
	case "restore":
		blobs, err := s.in.snapshot(t)()
		if err != nil {
			t.Fatal(err)
		}
		s.in = openInstance(t, s.opts, allKeyGroups, gather(blobs))
		return fmt.Sprintf("restored %d timers\n", s.in.ctx.Timers.Len())
	case "metrics":
		m := s.in.ctx.Metrics
		return fmt.Sprintf("late-dropped=%d late-side=%d timers=%d\n", m.LateDropped, m.LateSide, s.in.ctx.Timers.Len())
	default:
		td.Fatalf(t, "unknown command %q", td.Cmd)
	}
	lines := s.in.out.take()
	if len(lines) == 0 {
		return "(nothing)\n"
	}
	return strings.Join(lines, "\n") + "\n"
}

func scanOptions(t *testing.T, td *datadriven.TestData) Options {
	ms := func(key string) time.Duration {
		var n int64
		td.MaybeScanArgs(t, key, &n)
		return time.Duration(n) * time.Millisecond
	}
	var kind, fn, late string
	td.ScanArgs(t, "assigner", &kind)
	td.ScanArgs(t, "fn", &fn)
	td.MaybeScanArgs(t, "late", &late)
	opts := Options{AllowedLateness: ms("lateness"), LateTag: late}
	switch kind {
	case "tumbling":
		opts.Assigner = Tumbling{Size: ms("size"), Offset: ms("offset")}
	case "sliding":
		opts.Assigner = Sliding{Size: ms("size"), Slide: ms("slide"), Offset: ms("offset")}
	case "session":
		opts.Assigner = Session{Gap: ms("gap")}
	default:
		td.Fatalf(t, "unknown assigner %q", kind)
	}
	return withFn(t, opts, fn)
}
