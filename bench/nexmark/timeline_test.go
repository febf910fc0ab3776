package main

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSteadyRateAndIntervals(t *testing.T) {
	// 0–5 s: 100 events on 1 CPU s (warm-up); 5–10 s: 900 on 3; 10–15 s: 1,000 on 2.
	s := []Sample{{5, 100, 1}, {10, 1000, 4}, {15, 2000, 6}}
	if got := SteadyRate(s, 100); got != (2000-100)/(6-1.0) {
		t.Errorf("steady past 100 events: %v", got)
	}
	if got := SteadyRate(s, 500); got != 1000/2.0 {
		t.Errorf("steady past 500 events: %v", got)
	}
	if got := SteadyRate(s, 1500); got != 0 {
		t.Errorf("no sample past the warm-up before the last: got %v, want 0 (too short)", got)
	}
	iv := Intervals(s)
	want := []Interval{{5, 20, 100}, {10, 180, 300}, {15, 200, 500}}
	if len(iv) != len(want) {
		t.Fatalf("intervals %v", iv)
	}
	for i := range want {
		if iv[i] != want[i] {
			t.Errorf("interval %d: got %+v, want %+v", i, iv[i], want[i])
		}
	}
}

func TestBackendPairsAndSizes(t *testing.T) {
	p, err := backendPairs("hashmap,pebble", "hashmap,rocksdb")
	if err != nil || len(p) != 2 || p[1] != [2]string{"pebble", "rocksdb"} {
		t.Errorf("pairs: %v %v", p, err)
	}
	if p, _ := backendPairs("pebble", "hashmap,rocksdb"); len(p) != 2 || p[0][0] != "pebble" || p[1][1] != "rocksdb" {
		t.Errorf("one Weir backend pairs with each of Flink's: %v", p)
	}
	for _, bad := range [][2]string{{"hashmap,pebble,hashmap", "hashmap,rocksdb"}, {"heap", "hashmap"}, {"hashmap", "pebble"}} {
		if _, err := backendPairs(bad[0], bad[1]); err == nil {
			t.Errorf("%v: want an error", bad)
		}
	}
	for in, want := range map[string]int64{"4GiB": 4 << 30, "512MiB": 512 << 20, "2g": 2 << 30, "1000": 1000} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := parseBytes("lots"); err == nil || !strings.Contains(err.Error(), "4GiB") {
		t.Errorf("parseBytes(lots): %v", err)
	}
}

func TestRowsDiffer(t *testing.T) {
	w, f := &Measured{Rows: 10}, &Measured{Rows: 11}
	if got := rowsDiffer("q5", w, f); got != "result rows differ: Weir 10, Flink 11" {
		t.Errorf("got %q", got)
	}
	if rowsDiffer("q12", w, f) != "" || rowsDiffer("q5", w, &Measured{Rows: -1}) != "" || rowsDiffer("q5", w, nil) != "" {
		t.Error("q12 (wall-clock windows), uncounted and missing runs are not compared")
	}
}

// TestRowCountIsResultSize: the benchmark's counting blackhole counts, net,
// as many rows as the final result the changelog gives, for an updating
// query (q19, Top-N) and an append-only one (q1).
func TestRowCountIsResultSize(t *testing.T) {
	s := testSuite(t)
	for _, q := range []string{"q1", "q19"} {
		t.Run(q, func(t *testing.T) {
			res := runOnce(t, s, q, 5_000, 0)
			cfg := RunConfig{Params: Params{Events: 5_000, TPS: DiffTPS, Dir: t.TempDir()}, Sample: 10 * time.Millisecond}
			run, err := runWeir(context.Background(), s, q, cfg)
			if err != nil {
				t.Fatal(err)
			}
			// (the number of changes depends on how the mini-batches fell: not compared)
			if run.Rows != int64(len(res.Rows)) || run.Changes < run.Rows {
				t.Errorf("counted %d rows (%d changes), the changelog's result has %d", run.Rows, run.Changes, len(res.Rows))
			}
			last := run.Samples[len(run.Samples)-1]
			if last.Events() != 5_000 {
				t.Errorf("last sample: %v events, want 5000", last.Events())
			}
		})
	}
}

// TestCSVCheckpointPercentiles: results.csv carries each engine's
// checkpoint p50 and p99 (nearest rank) beside mean and max, under the
// header's names, and leaves them empty for an engine that did not run.
func TestCSVCheckpointPercentiles(t *testing.T) {
	var list []CheckpointInfo
	for i, ms := range []int64{30, 10, 20, 400, 40} {
		list = append(list, CheckpointInfo{ckID: int64(i + 1), ckMs: ms, ckBytes: 1000})
	}
	rows := []Row{{Query: "q18", Checkpoint: "1s", Events: 100, Backends: "pebble/rocksdb",
		Weir: &Measured{CPUSeconds: 1, Checkpoints: 5, CheckpointList: list}}}
	path := filepath.Join(t.TempDir(), "results.csv")
	if err := writeCSV(path, rows); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("records %v, %v", recs, err)
	}
	col := map[string]string{}
	for i, h := range recs[0] {
		col[h] = recs[1][i]
	}
	want := map[string]string{"weir_checkpoint_p50_ms": "30", "weir_checkpoint_p99_ms": "400", "weir_checkpoint_max_ms": "400",
		"weir_checkpoint_mean_ms": "100.0", "flink_checkpoint_p50_ms": "", "flink_checkpoint_p99_ms": ""}
	for k, v := range want {
		if got, ok := col[k]; !ok || got != v {
			t.Errorf("%s = %q (present %v), want %q", k, got, ok, v)
		}
	}
}

// samplesAt builds samples at the given source events for a run whose
// sources emit at rate1 events per CPU second up to half of 100 events
// and at rate2 after, the last sample at the end of input.
func samplesAt(rate1, rate2 float64, at ...float64) []Sample {
	cpu := func(e float64) float64 {
		if e <= 50 {
			return e / rate1
		}
		return 50/rate1 + (e-50)/rate2
	}
	var out []Sample
	for i, e := range at {
		out = append(out, Sample{float64(i + 1), e, cpu(e)})
	}
	return out
}

// StateGrowth reads each span's rate off samples that do not fall on its
// bounds (interpolated), and refuses a span it cannot read: no sample of
// its own inside, or a bound closed only by a sample taken once the
// sources had ended.
func TestStateGrowth(t *testing.T) {
	early, late, err := StateGrowth(samplesAt(2000, 500, 5, 25, 45, 55, 75, 95, 100), 100)
	if err != nil || math.Abs(early-2000) > 1e-9 || math.Abs(late-500) > 1e-9 {
		t.Errorf("got %v, %v, %v; want 2000, 500, no error", early, late, err)
	}
	if got := growthCell(&Measured{Samples: samplesAt(2000, 500, 5, 25, 45, 55, 75, 95, 100)}, 100); got != "2.0K → 500 ev/s/core (-75.0 %)" {
		t.Errorf("cell %q", got)
	}
	const unsampled, ended = "no progress sample between", "before the sources ended"
	for name, c := range map[string]struct {
		s    []Sample
		want string
	}{
		"end of input closes 90 %": {samplesAt(1000, 500, 5, 25, 45, 55, 75, 85, 100), ended},
		// sampled on while the job worked after its sources ended
		"a sample after the sources ended closes 90 %": {append(samplesAt(1000, 500, 5, 25, 45, 55, 75, 85, 100),
			Sample{8, 100, 0.2}), ended},
		"no sample within 10–30 %": {samplesAt(1000, 500, 5, 35, 55, 75, 95, 100), unsampled + " events 10 and 30"},
		"no sample within 70–90 %": {samplesAt(1000, 500, 5, 25, 45, 65, 95, 100), unsampled + " events 70 and 90"},
		"no samples":               {nil, unsampled},
		"one sample, the last":     {samplesAt(1000, 500, 100), unsampled},
	} {
		if e, l, err := StateGrowth(c.s, 100); err == nil {
			t.Errorf("%s: read %v, %v", name, e, l)
		}
		if got := growthCell(&Measured{Samples: c.s}, 100); !strings.HasPrefix(got, "n/a: ") || !strings.Contains(got, c.want) {
			t.Errorf("%s: cell %q, want one saying %q", name, got, c.want)
		}
	}
}

func TestGrowthSpansText(t *testing.T) {
	if got := growthSpansText(); got != "events 10–30 % → 70–90 %" {
		t.Errorf("got %q", got)
	}
}
