package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be the jobs' Weir process, as the soak
// command is without -weir.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == childArg {
		if err := childMain(os.Args[2:]); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The short soak make test runs: one cycle of each kind of fault but the
// clean broker bounce (the long run's), on private Kafka and MariaDB
// instances, then the whole check. The long run is the command:
// go run ./bench/soak -cycles 1000.
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the soak starts a broker and a database")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := findPaths(root); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; CI requires it: run scripts/services.sh up", err)
		}
		t.Skipf("%v; to run the soak: scripts/services.sh up", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cfg := Config{Root: root, Dir: t.TempDir(), Weir: []string{self, childArg}, Cycles: 5, Seed: 1,
		Sequence: []string{faultWeirKill, faultWeirPause, faultKafkaHard, faultMariaDBKill, faultMariaDBStop},
		RunMin:   200 * time.Millisecond, RunMax: 500 * time.Millisecond, PauseMax: time.Second,
		Recovery: 2 * time.Minute, Drain: 3 * time.Minute, Checkpoint: 300 * time.Millisecond, GoMaxProcs: 1, Log: &log}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg)
	var sum bytes.Buffer
	if rep != nil {
		rep.Print(&sum, cfg)
	}
	t.Logf("%s%s", log.String(), sum.String())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Cycles != 5 {
		t.Errorf("%d cycles, want 5", rep.Cycles)
	}
	if !rep.OK() {
		t.Errorf("soak verdict FAIL (scratch dir %s):\n%s", cfg.Dir, sum.String())
	}
	if !strings.Contains(sum.String(), "VERDICT: OK") {
		t.Errorf("summary without VERDICT: OK:\n%s", sum.String())
	}
}
