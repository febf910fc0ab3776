package main

import (
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func testSuite(t testing.TB) *Suite {
	t.Helper()
	path := os.Getenv("WEIR_NEXMARK_QUERIES")
	if path == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatal(err)
		}
		path = defaultQueriesFile(root)
	}
	s, err := LoadSuite(path)
	if err != nil {
		// Not a failure with CI=true: the definitions are shared material
		// beside the clone, not a service the test command installs. A
		// clone elsewhere (mktemp -d) skips the whole suite: clone beside
		// shared/ or set WEIR_NEXMARK_QUERIES to run it.
		t.Skipf("no query definitions: %v (clone the repository beside shared/, or set WEIR_NEXMARK_QUERIES)", err)
	}
	return s
}

func supported() []string {
	var out []string
	for _, q := range DefaultQueries() {
		if _, no := Unsupported[q]; !no {
			out = append(out, q)
		}
	}
	return out
}

func TestSuiteSplitsAndSubstitutes(t *testing.T) {
	s := testSuite(t)
	if got := len(s.Names()); got < 23 {
		t.Fatalf("%d query sections, want q0–q22 at least", got)
	}
	dir := t.TempDir()
	for _, q := range DefaultQueries() {
		sc, err := s.Script(q, Params{Events: 1000, Dir: dir, Changelog: filepath.Join(dir, "out")})
		if err != nil {
			t.Fatal(err)
		}
		text := sc.Text()
		if strings.Contains(text, "${") {
			t.Errorf("%s: placeholder left in the script:\n%s", q, text)
		}
		if len(sc.Sinks) != 1 || !strings.Contains(text, "'connector' = 'changelog-file'") {
			t.Errorf("%s: sinks %v not rewritten to changelog files", q, sc.Sinks)
		}
		if !strings.HasPrefix(sc.Statements[len(sc.Statements)-1], "INSERT") {
			t.Errorf("%s: the last statement is not the INSERT", q)
		}
	}
	q14, _ := s.Script("q14", Params{Events: 1000, Dir: dir})
	if q14.Functions["count_char"] == "" || strings.Contains(q14.Text(), "CREATE FUNCTION") {
		t.Errorf("q14: CREATE FUNCTION not taken out of the script: %v", q14.Functions)
	}
	q13, _ := s.Script("q13", Params{Events: 1000, Dir: dir, Engine: "flink"})
	if !strings.Contains(q13.Text(), "'connector' = 'side-input'") {
		t.Errorf("q13 for Flink: side input not rewritten:\n%s", q13.Text())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "data", "side_input.txt")); err != nil || !strings.HasPrefix(string(b), "0,0\n1,1\n") {
		t.Errorf("side input file: %v %q", err, b[:min(len(b), 20)])
	}
}

func TestSplitStatements(t *testing.T) {
	got := SplitStatements("-- a; comment\nSELECT ';' FROM t; -- tail\n\nINSERT INTO x SELECT 1;")
	want := []string{"SELECT ';' FROM t", "INSERT INTO x SELECT 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// runOnce runs q on Weir in this process into changelog files and reads
// the (normalised) final result.
func runOnce(t *testing.T, s *Suite, q string, events int64, checkpoint time.Duration) *Result {
	return runOn(t, s, q, events, checkpoint, "")
}

// runOn is runOnce on the state backend of that state.backend.type.
func runOn(t *testing.T, s *Suite, q string, events int64, checkpoint time.Duration, backend string) *Result {
	t.Helper()
	dir := t.TempDir()
	cfg := RunConfig{Params: Params{Events: events, TPS: DiffTPS, Dir: dir, Changelog: filepath.Join(dir, "out")},
		Checkpoint: checkpoint, StateBackend: backend}
	if _, err := runWeir(context.Background(), s, q, cfg); err != nil {
		t.Fatal(err)
	}
	sc, err := s.Script(q, cfg.Params)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ReadResult(filepath.Join(cfg.Changelog, sc.Sinks[0]+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	if norm := normalisers[q]; norm != nil {
		res = norm(res)
	}
	return res
}

// TestQueriesRunDeterministically runs every supported query twice on
// 20,000 events with exactly-once checkpoints every 100 ms: both runs must
// give the same final result (multiset, or table after the changelog).
func TestQueriesRunDeterministically(t *testing.T) {
	s := testSuite(t)
	events := int64(20_000)
	if testing.Short() {
		events = 5_000
	}
	for _, q := range supported() {
		t.Run(q, func(t *testing.T) {
			a := runOnce(t, s, q, events, 100*time.Millisecond)
			b := runOnce(t, s, q, events, 100*time.Millisecond)
			if d := Diff(a, b, "run 1", "run 2", 5); d != "" {
				t.Fatal(d)
			}
			if len(a.Rows) == 0 && q != "q7" {
				t.Errorf("%s: empty result", q)
			}
		})
	}
}

// TestStatefulQueriesSameOnPebble runs the stateful queries the state
// backend benchmark uses, and q19 (Top-N's binary rows), on the heap and
// on Pebble, with checkpoints: the final results must be equal.
func TestStatefulQueriesSameOnPebble(t *testing.T) {
	s := testSuite(t)
	for _, q := range []string{"q4", "q9", "q19", "q20"} {
		t.Run(q, func(t *testing.T) {
			a := runOn(t, s, q, 5_000, 100*time.Millisecond, "hashmap")
			b := runOn(t, s, q, 5_000, 100*time.Millisecond, "pebble")
			if d := Diff(a, b, "heap", "pebble", 5); d != "" {
				t.Fatal(d)
			}
			if len(a.Rows) == 0 {
				t.Errorf("%s: empty result", q)
			}
		})
	}
}

// TestAgainstGenerator checks q0, q1, q2 and q12 (per bidder) against
// results computed from the generator directly.
func TestAgainstGenerator(t *testing.T) {
	s := testSuite(t)
	for _, q := range []string{"q0", "q1", "q2", "q12"} {
		t.Run(q, func(t *testing.T) {
			got := runOnce(t, s, q, 20_000, 0)
			want, err := oracleResult(q, 20_000, DiffTPS)
			if err != nil {
				t.Fatal(err)
			}
			if d := Diff(got, want, "Weir", "generator", 5); d != "" {
				t.Fatal(d)
			}
			if len(want.Rows) == 0 {
				t.Fatal("the generator gives no rows: the check checks nothing")
			}
		})
	}
}

// TestDifferentialWithFlink runs every query on Weir and on Flink
// (bench/flink, built with mvn -o package) and compares final results.
// WEIR_FLINK_BENCH=1 turns it on (Maven and the JVM are slow);
// WEIR_NEXMARK_DIFF_EVENTS sets the stream length (default 100,000).
func TestDifferentialWithFlink(t *testing.T) {
	if os.Getenv("WEIR_FLINK_BENCH") != "1" {
		t.Skip("set WEIR_FLINK_BENCH=1 to compare with Flink")
	}
	s := testSuite(t)
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	events := int64(100_000)
	if v := os.Getenv("WEIR_NEXMARK_DIFF_EVENTS"); v != "" {
		if events, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	r := &runner{f: suiteFlags{parallelism: 2, timeout: 20 * time.Minute, flinkDir: filepath.Join(root, "bench", "flink")}}
	for _, q := range supported() {
		t.Run(q, func(t *testing.T) {
			d := r.differential(context.Background(), s, q, events)
			t.Log(d)
			if !d.Passed() {
				t.Fatal(d)
			}
		})
	}
}

func TestCanonicalText(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{canonical(nil, bigintT), `\N`},
		{canonical("a\tb\\c\nd", strT), `a\tb\\c\nd`},
		{canonical(time.UnixMilli(1704067200005).UTC(), tsT), "2024-01-01 00:00:00.005"},
		{canonical(mustDecimal("908"), euroT), "908.000"},
		{canonical(int64(-3), bigintT), "-3"},
	} {
		if c.got != c.want {
			t.Errorf("canonical: got %q, want %q", c.got, c.want)
		}
	}
	if !sameField("0.1", "0.1") || !sameField("1.0E10", "1e+10") || sameField("1.0", "1.00") {
		t.Error("sameField: floating-point notation must compare by value, decimals by text")
	}
}

func TestReportFiles(t *testing.T) {
	dir := t.TempDir()
	rows := []Row{
		{Query: "q0", Checkpoint: "off", Events: 1000, Weir: &Measured{CPUSeconds: 0.002, PeakRSS: 30 << 20}, Flink: &Measured{CPUSeconds: 0.005, PeakRSS: 900 << 20}},
		{Query: "q6", Checkpoint: "off", Events: 1000, Weir: &Measured{Err: "not supported"}},
	}
	if err := writeReport(dir, rows, "header\n"); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "results.md"))
	if !strings.Contains(string(md), "| q0 | off |  | 500.0K | 200.0K | 2.50× | too short | too short | – | 30 MB | 900 MB |") || !strings.Contains(string(md), "q6 (off) on Weir: not supported") {
		t.Errorf("results.md:\n%s", md)
	}
	f, err := os.Open(filepath.Join(dir, "chart.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatal(err)
	}
}
