package main

import (
	"bytes"
	"context"
	"encoding/json"
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
	var log bytes.Buffer
	cfg, err := parseFlags([]string{"-records", "3000", "-rate", "1500", "-payload", "256", "-keys", "40", "-parallelism", "2",
		"-budget", "2mb", "-kills", "2", "-interval", "100ms", "-dir", t.TempDir(), "-timeout", "3m"})
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
	if rep.kills() != 2 || len(rep.Attempts) != 3 {
		t.Errorf("%d attempts with %d SIGKILLs, want 3 with 2", len(rep.Attempts), rep.kills())
	}
	if !rep.OK() || !strings.Contains(sum.String(), "VERDICT: OK") {
		t.Errorf("verdict not OK:\n%s", sum.String())
	}
	for _, a := range rep.Attempts[1:] {
		if !a.Restored || a.RestoredAt == 0 {
			t.Errorf("attempt %+v did not restore a checkpoint", a)
		}
	}
}
