package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"strings"
	"testing"
)

// TestMain lets the test binary be the job process, as the command is.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == childArg {
		var c childConfig
		if err := json.Unmarshal([]byte(os.Args[2]), &c); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(2)
		}
		if err := runChild(c); err != nil {
			os.Stderr.WriteString("largestate child: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The small run make test does: the same program as the command, with a
// state of a few MB on a 2 MB budget per subtask (so Pebble flushes and
// compacts), two SIGKILLs and restores, and the exact check. The large
// run is the command: go run ./bench/largestate -state-size 4g.
func TestLargeStateSmall(t *testing.T) {
	rep, sum := runSmall(t, "-records", "3000", "-kills", "2")
	if rep.kills() != 2 || len(rep.Attempts) != 3 {
		t.Errorf("%d attempts with %d SIGKILLs, want 3 with 2", len(rep.Attempts), rep.kills())
	}
	if !rep.OK() || !strings.Contains(sum, "VERDICT: OK") {
		t.Errorf("verdict not OK:\n%s", sum)
	}
	for _, a := range rep.Attempts[1:] {
		if !a.Restored || a.RestoredAt == 0 {
			t.Errorf("attempt %+v did not restore a checkpoint", a)
		}
	}
}

// -rescale-to: state checkpointed at parallelism 2 is restored at 3 and
// the output is still exact. Of the three new subtasks (128 key groups:
// 0..42, 43..85, 86..127) only the middle one overlaps both old ones
// (0..63, 64..127): it opens one in place and copies the other's entries
// in; the outer two each open one old subtask's files in place.
func TestLargeStateRescale(t *testing.T) {
	rep, _ := runSmall(t, "-records", "2000", "-kills", "1", "-rescale-to", "3")
	if !rep.OK() || rep.kills() != 1 || len(rep.Attempts) != 2 {
		t.Fatalf("%d attempts with %d SIGKILLs, verdict OK %v; want 2 with 1, OK", len(rep.Attempts), rep.kills(), rep.OK())
	}
	copied := map[string]int64{}
	for _, p := range rep.Attempts[1].Phases {
		copied[p.KeyGroups] = p.Values["copied"]
	}
	if want := map[string]int64{"[0..42]": 0, "[43..85]": 1, "[86..127]": 0}; !maps.Equal(copied, want) {
		t.Errorf("restore at parallelism 3: sources copied by key groups %v, want %v", copied, want)
	}
}

// runSmall runs the small job (parallelism 2, 40 keys, 256 B payloads,
// 1500 records/s, a 2 MB budget, 100 ms checkpoints) with args added,
// logs its report and returns it and its text.
func runSmall(t *testing.T, args ...string) (*Report, string) {
	t.Helper()
	var log bytes.Buffer
	cfg, err := parseFlags(append([]string{"-rate", "1500", "-payload", "256", "-keys", "40", "-parallelism", "2",
		"-budget", "2mb", "-interval", "100ms", "-dir", t.TempDir(), "-timeout", "3m"}, args...))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Log = &log
	rep, err := Run(context.Background(), cfg)
	var sum bytes.Buffer
	if rep != nil {
		rep.Print(&sum)
	}
	t.Logf("%s%s", log.String(), sum.String())
	if err != nil {
		t.Fatal(err)
	}
	return rep, sum.String()
}
