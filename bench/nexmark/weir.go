package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/planner"
	"github.com/weirstream/weir/sql/session"
	"github.com/weirstream/weir/state/backends"
	"github.com/weirstream/weir/task"
)

// RunConfig is how one query runs.
type RunConfig struct {
	Params
	// Checkpoint is the checkpoint interval; 0 turns checkpointing off
	// (at-most-once, as Nexmark's runs without checkpoints).
	Checkpoint time.Duration
	// Parallelism of every operator. Default 2 (bench/flink's default).
	Parallelism int
	// StateBackend is Weir's state.backend.type: hashmap (default),
	// pebble or rocksdb (its alias). Pebble works under Dir.
	StateBackend string
	// FlinkBackend is Flink's state.backend.type: hashmap (default) or
	// rocksdb (with incremental checkpoints).
	FlinkBackend string
	// Sample is how often the run samples its progress (Samples); default 5 s.
	Sample time.Duration
}

func (c *RunConfig) ensureDefaults() {
	if c.Parallelism == 0 {
		c.Parallelism = 2
	}
	if c.FlinkBackend == "" {
		c.FlinkBackend = "hashmap"
	}
	if c.Engine == "" {
		c.Engine = "weir"
	}
}

// WeirRun is what one Weir run reports.
type WeirRun struct {
	WallSeconds float64 `json:"wall_seconds"`
	Checkpoints int     `json:"checkpoints"`
	Restarts    int     `json:"restarts"`
	// CheckpointList has each completed checkpoint; Samples the run's
	// progress (progress.go).
	CheckpointList []CheckpointInfo `json:"checkpoint_list"`
	Samples        []Sample         `json:"samples"`
	// Rows is the net number of rows the blackhole sinks received (the
	// final result's size), Changes every changelog row; -1 when the query
	// has no blackhole sink (q10).
	Rows    int64 `json:"rows"`
	Changes int64 `json:"changes"`
}

// planWeir turns a script into Weir's job: the session runs the DDL and
// collects the INSERTs; the planner (with the script's UDFs) plans them.
func planWeir(sc *Script, cfg RunConfig, rows *rowCounter) (*graph.JobGraph, runtime.Options, error) {
	cfg.ensureDefaults()
	s := session.New()
	s.Out = io.Discard
	s.Connectors.Sinks["changelog-file"] = changelogSinkFactory
	s.Connectors.Sinks["blackhole"] = rows.factory
	if err := s.Execute(sc.Text()); err != nil {
		return nil, runtime.Options{}, fmt.Errorf("%s: %w", sc.Query, err)
	}
	fns, err := weirFunctions(sc.Functions)
	if err != nil {
		return nil, runtime.Options{}, fmt.Errorf("%s: %w", sc.Query, err)
	}
	p := &planner.Planner{Catalog: s.Catalog, Connectors: s.Connectors,
		Config: planner.Config{Parallelism: cfg.Parallelism, Functions: fns,
			// Nexmark's Flink settings (bench/flink's RunQuery sets the same).
			MiniBatchSize: 50_000, MiniBatchLatency: 2 * time.Second}}
	sinks, err := p.PlanInserts(s.Inserts())
	if err != nil {
		return nil, runtime.Options{}, fmt.Errorf("%s: %w", sc.Query, err)
	}
	sg, err := p.Build("nexmark-"+sc.Query, sinks)
	if err != nil {
		return nil, runtime.Options{}, fmt.Errorf("%s: %w", sc.Query, err)
	}
	jg, err := sg.JobGraph()
	if err != nil {
		return nil, runtime.Options{}, fmt.Errorf("%s: %w", sc.Query, err)
	}
	opts := runtime.Options{JobID: "nexmark-" + sc.Query, Mode: task.AtMostOnce, Restart: runtime.NoRestart{},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	conf := map[string]string{"state.backend.type": cfg.StateBackend}
	if cfg.Dir != "" {
		conf["state.backend.local-dir"] = filepath.Join(cfg.Dir, "state")
	}
	if opts.StateBackend, err = backends.FromConfig(func(k string) (string, bool) { v, ok := conf[k]; return v, ok }); err != nil {
		return nil, runtime.Options{}, err
	}
	if cfg.Checkpoint > 0 {
		opts.Mode = task.ExactlyOnce
		opts.Checkpoint.Interval = cfg.Checkpoint
		opts.CheckpointDir = filepath.Join(cfg.Dir, "checkpoints")
	}
	return jg, opts, nil
}

// runWeir runs query q in this process.
func runWeir(ctx context.Context, suite *Suite, q string, cfg RunConfig) (*WeirRun, error) {
	cfg.ensureDefaults()
	sc, err := suite.Script(q, cfg.Params)
	if err != nil {
		return nil, err
	}
	rows := &rowCounter{}
	jg, opts, err := planWeir(sc, cfg, rows)
	if err != nil {
		return nil, err
	}
	opts.Metrics = metrics.NewRegistry()
	all := collectCheckpoints(&opts)
	smp := newSampler(opts.Metrics, cfg.Sample)
	go smp.run()
	res, err := runtime.Run(ctx, jg, opts)
	samples := smp.finish()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	cks := completedCheckpoints(all()) // every one: res.Checkpoints holds the newest checkpoint.HistorySize
	out := &WeirRun{WallSeconds: time.Since(smp.start).Seconds(), Checkpoints: len(cks), Restarts: res.Restarts,
		CheckpointList: cks, Samples: samples, Rows: rows.rows.Load(), Changes: rows.changes.Load()}
	if !strings.Contains(sc.Text(), "'blackhole'") {
		out.Rows, out.Changes = -1, -1
	}
	return out, nil
}

// collectCheckpoints makes opts's listener keep every completed
// checkpoint's statistics as it completes; the returned function gives
// them once the run has ended.
func collectCheckpoints(opts *runtime.Options) func() []checkpoint.CheckpointStats {
	var mu sync.Mutex
	var all []checkpoint.CheckpointStats
	prev := opts.Listener
	opts.Listener = func(e runtime.Event) {
		if prev != nil {
			prev(e)
		}
		if e.Kind == runtime.EventCheckpointCompleted && e.Stats != nil {
			mu.Lock()
			all = append(all, *e.Stats)
			mu.Unlock()
		}
	}
	return func() []checkpoint.CheckpointStats {
		mu.Lock()
		defer mu.Unlock()
		return all
	}
}
