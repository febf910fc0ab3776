package debloat

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// epoch is the time t=0 of the scripts.
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// TestDebloater runs the scripts in testdata. Commands:
//
//	new [target=DUR] [period=DUR] [samples=N] [threshold=N] [min=N] [max=N]
//	processed n=N
//	tick t=DUR [idle=DUR] [buffered=N] [batches=N]
//
// t and idle are the time since the epoch and the total idle time so far;
// batches defaults to 8. A tick prints "period runs" or the decision.
func TestDebloater(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var d *Debloater
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "new":
				o := Options{Target: dur(t, td, "target"), Period: dur(t, td, "period"), Samples: num(t, td, "samples"),
					ThresholdPercent: num(t, td, "threshold"), MinBatch: num(t, td, "min"), MaxBatch: num(t, td, "max")}
				d = New(o)
				return fmt.Sprintf("batch size %d\n", d.BatchSize())
			case "processed":
				d.Processed(num(t, td, "n"))
				return ""
			case "tick":
				s := Sample{Now: epoch.Add(dur(t, td, "t")), Idle: dur(t, td, "idle"),
					Buffered: int64(num(t, td, "buffered")), Batches: 8}
				if td.HasArg("batches") {
					s.Batches = num(t, td, "batches")
				}
				dec, ok := d.Tick(s)
				if !ok {
					return "period runs\n"
				}
				return render(dec)
			}
			td.Fatalf(t, "unknown command %q", td.Cmd)
			return ""
		})
	})
}

func render(d Decision) string {
	var b strings.Builder
	if d.Announce {
		fmt.Fprintf(&b, "announce batch size %d", d.BatchSize)
	} else {
		fmt.Fprintf(&b, "keep batch size %d", d.BatchSize)
	}
	fmt.Fprintf(&b, "; throughput %.1f rec/s; time to consume %v\n", d.Throughput, d.TimeToConsume.Round(time.Millisecond))
	return b.String()
}

func dur(t *testing.T, td *datadriven.TestData, key string) time.Duration {
	if !td.HasArg(key) {
		return 0
	}
	var s string
	td.ScanArgs(t, key, &s)
	d, err := time.ParseDuration(s)
	if err != nil {
		td.Fatalf(t, "%s: %v", key, err)
	}
	return d
}

func num(t *testing.T, td *datadriven.TestData, key string) int {
	if !td.HasArg(key) {
		return 0
	}
	var n int
	td.ScanArgs(t, key, &n)
	return n
}

// Validate names the option at fault by Flink's name.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Target: -time.Second}, "'taskmanager.network.memory.buffer-debloat.target' must be positive, got -1s"},
		{Options{Period: -1}, "'taskmanager.network.memory.buffer-debloat.period' must be positive"},
		{Options{Samples: -2}, "'taskmanager.network.memory.buffer-debloat.samples' must be at least 1, got -2"},
		{Options{ThresholdPercent: 150}, "'taskmanager.network.memory.buffer-debloat.threshold-percentages' must be 0 to 100, got 150"},
		{Options{MinBatch: 10, MaxBatch: 5}, "min (10) <= max (5)"},
	} {
		c.o.EnsureDefaults()
		err := c.o.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error containing %q", c.o, err, c.want)
		}
	}
	o := Options{}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
