// Command largestate runs a keyed job whose state grows larger than its
// memory budget on the Pebble backend, checkpointing every second (to a
// directory, to the S3 server of scripts/services.sh with -s3, or to any
// -checkpoint-dir such as s3://bucket/prefix), SIGKILLs it several times
// as it runs, restores it from the latest checkpoint each time, and checks its exact
// output against per-key results recomputed from the deterministic input.
// Meanwhile it samples the job process's resident memory (VmRSS from
// /proc) and the size of its state on disk, and reports them against the
// budget with the checkpoint durations and sizes and the restore times.
//
//	go run ./bench/largestate -state-size 4g -budget 64mb -kills 4
//	go run ./bench/largestate -state-size 2g -budget 64mb -kills 3 -s3
//	go run ./bench/largestate -state-size 2g -parallelism 2 -kills 1 -rescale-to 3
//
// With -rescale-to every restore is at that parallelism: the key groups
// of the old subtasks are split or merged (the report gives each new
// subtask's restore phases, the copy of merged sources among them).
//
// The job (see job.go) keeps per key a count, a sum and a MapState of
// every record's payload (incompressible), so its state on disk is about
// -state-size; at the end of input each key emits its count, sum and what
// its MapState holds (entries and a checksum of every payload) into an
// exactly-once file sink. The parent kills the job when its progress
// (records emitted as of a completed checkpoint) passes 1/(kills+1),
// 2/(kills+1), … of the input, a random fraction of a checkpoint interval
// later. VERDICT OK needs every key's line exactly once and exact.
//
// The child is this program itself (largestate-child JSON), or the test
// binary in TestLargeStateSmall, the small run make test does.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/weirstream/weir/state/backends"
)

// childArg makes this program run the job (one attempt).
const childArg = "largestate-child"

func main() {
	if len(os.Args) > 2 && os.Args[1] == childArg {
		var c childConfig
		if err := json.Unmarshal([]byte(os.Args[2]), &c); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := runChild(c); err != nil {
			fmt.Fprintln(os.Stderr, "largestate child:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(cli(os.Args[1:]))
}

func cli(args []string) int {
	cfg, err := parseFlags(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := Run(ctx, cfg)
	if rep != nil {
		rep.Print(os.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "largestate: %v (work dir %s)\n", err, cfg.Dir)
		return 1
	}
	if !rep.OK() {
		return 1
	}
	if !cfg.Keep {
		_ = os.RemoveAll(cfg.Dir)
	}
	return 0
}

func parseFlags(args []string) (Config, error) {
	fs := flag.NewFlagSet("largestate", flag.ContinueOnError)
	var c Config
	var size, budget string
	fs.StringVar(&size, "state-size", "1g", "state to build on disk (Flink's memory size syntax: 512mb, 4g)")
	fs.Int64Var(&c.Records, "records", 0, "number of records (default: from -state-size and -payload)")
	fs.IntVar(&c.Keys, "keys", 10000, "number of keys")
	fs.IntVar(&c.Payload, "payload", 1000, "payload bytes per record (each is kept in state)")
	fs.IntVar(&c.Parallelism, "parallelism", 1, "parallelism of the job")
	fs.IntVar(&c.RescaleTo, "rescale-to", 0, "restore every killed attempt at this parallelism (0: -parallelism)")
	fs.StringVar(&budget, "budget", "64mb", "state.backend.rocksdb.memory.fixed-per-slot: memory budget of each keyed subtask's backend")
	fs.IntVar(&c.Rate, "rate", 0, "records per second the source emits at most (0: unthrottled)")
	fs.IntVar(&c.Kills, "kills", 4, "how many times to SIGKILL the job")
	fs.DurationVar(&c.Interval, "interval", time.Second, "checkpoint interval")
	fs.BoolVar(&c.S3, "s3", false, "checkpoint to S3 (WEIR_S3_* of scripts/services.sh env) instead of a directory")
	fs.StringVar(&c.CheckpointDir, "checkpoint-dir", "", "checkpoint storage (execution.checkpointing.dir: a path or s3://bucket/prefix, AWS_* credentials); default <dir>/checkpoints, or the services' bucket with -s3")
	fs.BoolVar(&c.Incremental, "incremental", true, "incremental checkpoints (execution.checkpointing.incremental); false: full snapshots")
	fs.StringVar(&c.Dir, "dir", "", "work directory: local state, checkpoints, output (default: a new temp dir)")
	fs.BoolVar(&c.Keep, "keep", false, "keep the work directory after a successful run")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the kill delays")
	fs.DurationVar(&c.Timeout, "timeout", 2*time.Hour, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.RescaleTo < 0 || c.Parallelism < 1 {
		return c, fmt.Errorf("-parallelism %d, -rescale-to %d: want 1 or more (-rescale-to 0: no rescale)", c.Parallelism, c.RescaleTo)
	}
	bytes, err := backends.ParseMemorySize(size)
	if err != nil {
		return c, fmt.Errorf("-state-size: %w", err)
	}
	if c.BudgetBytes, err = backends.ParseMemorySize(budget); err != nil {
		return c, fmt.Errorf("-budget: %w", err)
	}
	c.Budget = budget
	if c.Records == 0 {
		c.Records = bytes / int64(c.Payload+entryOverhead)
	}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "largestate-"); err != nil {
			return c, err
		}
	}
	c.Dir, err = filepath.Abs(c.Dir)
	return c, err
}

// entryOverhead is about what a MapState entry costs on disk beside its
// payload: its Pebble key (key group, state id, stream key, user key) and
// the SST's per-entry bytes.
const entryOverhead = 40
