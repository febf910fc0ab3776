package main

import (
	"context"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"
)

// BenchmarkQueries runs each supported query once per iteration in this
// process (heap state, checkpoints off, parallelism 2, the child's GC
// settings) and reports allocations and bytes per event (deterministic
// up to mini-batch timing: compare these) and ns per event, wall and CPU
// (noisy on a shared machine). Events: WEIR_NEXMARK_BENCH_EVENTS
// (default 200,000); state backend: WEIR_NEXMARK_BENCH_BACKEND (hashmap,
// the default, or pebble); one query: -bench BenchmarkQueries/q19.
//
//	WEIR_NEXMARK_QUERIES=../shared/nexmark/queries.sql \
//	  go test -run '^$' -bench BenchmarkQueries -benchtime 1x ./bench/nexmark/
func BenchmarkQueries(b *testing.B) {
	s := testSuite(b)
	events := int64(200_000)
	if v := os.Getenv("WEIR_NEXMARK_BENCH_EVENTS"); v != "" {
		var err error
		if events, err = strconv.ParseInt(v, 10, 64); err != nil {
			b.Fatal(err)
		}
	}
	backend := os.Getenv("WEIR_NEXMARK_BENCH_BACKEND")
	if backend == "" {
		backend = "hashmap"
	}
	defer debug.SetGCPercent(debug.SetGCPercent(DefaultGOGC))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(DefaultMemoryLimit))
	for _, q := range supported() {
		b.Run(q, func(b *testing.B) {
			var mallocs, bytes uint64
			var wall time.Duration
			var cpu float64
			for b.Loop() {
				cfg := RunConfig{Params: Params{Events: events, Dir: b.TempDir()}, Sample: time.Hour, StateBackend: backend}
				goruntime.GC()
				var m0, m1 goruntime.MemStats
				goruntime.ReadMemStats(&m0)
				c0, t0 := selfCPU(), time.Now()
				if _, err := runWeir(context.Background(), s, q, cfg); err != nil {
					b.Fatal(err)
				}
				wall += time.Since(t0)
				cpu += selfCPU() - c0
				goruntime.ReadMemStats(&m1)
				mallocs += m1.Mallocs - m0.Mallocs
				bytes += m1.TotalAlloc - m0.TotalAlloc
			}
			n := float64(events) * float64(b.N)
			b.ReportMetric(float64(mallocs)/n, "allocs/event")
			b.ReportMetric(float64(bytes)/n, "B/event")
			b.ReportMetric(float64(wall.Nanoseconds())/n, "ns/event")
			b.ReportMetric(cpu*1e9/n, "cpu-ns/event")
		})
	}
}
