package session

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/debloat"
	"github.com/weirstream/weir/duration"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/sql/planner"
	"github.com/weirstream/weir/state/backends"
	"github.com/weirstream/weir/task"
)

// Settings are the values of SET keys the session understands.
type Settings map[string]string

func (st Settings) get(key string) (string, bool) {
	v, ok := st[key]
	return v, ok
}

func (st Settings) duration(key string) (time.Duration, bool, error) {
	v, ok := st[key]
	if !ok {
		return 0, false, nil
	}
	d, err := duration.Parse(v)
	if err != nil {
		return 0, false, fmt.Errorf("SET '%s': %w", key, err)
	}
	return d, true, nil
}

func (st Settings) int(key string) (int, bool, error) {
	v, ok := st[key]
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, false, fmt.Errorf("SET '%s' = '%s': not an integer", key, v)
	}
	return n, true, nil
}

func (st Settings) bool(key string) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(st[key])); v {
	case "":
		return false, nil
	case "true", "false":
		return v == "true", nil
	}
	return false, fmt.Errorf("SET '%s' = '%s': want true or false", key, st[key])
}

// miniBatch reads Flink's mini-batch keys and aggregation phase strategy
// into cfg. As in Flink, a mini-batch needs both limits: with
// table.exec.mini-batch.enabled = true, allow-latency and size must be
// positive.
func (st Settings) miniBatch(cfg *planner.Config) error {
	const enabled, latency, size = "table.exec.mini-batch.enabled", "table.exec.mini-batch.allow-latency", "table.exec.mini-batch.size"
	if v, ok := st["table.optimizer.agg-phase-strategy"]; ok {
		s, err := planner.ParseAggPhaseStrategy(v)
		if err != nil {
			return fmt.Errorf("SET 'table.optimizer.agg-phase-strategy': %w", err)
		}
		cfg.AggPhase = s
	}
	on, err := st.bool(enabled)
	if err != nil || !on {
		return err
	}
	d, _, err := st.duration(latency)
	if err != nil {
		return err
	}
	if d <= 0 {
		return fmt.Errorf("SET '%s' = 'true' needs '%s' greater than 0, e.g. SET '%s' = '2 s'", enabled, latency, latency)
	}
	n, _, err := st.int(size)
	if err != nil {
		return err
	}
	if n <= 0 {
		return fmt.Errorf("SET '%s' = 'true' needs '%s' greater than 0, e.g. SET '%s' = '5000'", enabled, size, size)
	}
	cfg.MiniBatchSize, cfg.MiniBatchLatency = n, d
	return nil
}

// sinkModes reads table.exec.sink.upsert-materialize and
// table.exec.sink.keyed-shuffle (AUTO, FORCE or NONE; default AUTO).
func (st Settings) sinkModes(cfg *planner.Config) error {
	for key, mode := range map[string]*planner.SinkMode{
		"table.exec.sink.upsert-materialize": &cfg.UpsertMaterialize,
		"table.exec.sink.keyed-shuffle":      &cfg.KeyedShuffle,
	} {
		v, ok := st[key]
		if !ok {
			continue
		}
		m, err := planner.ParseSinkMode(v)
		if err != nil {
			return fmt.Errorf("SET '%s': %w", key, err)
		}
		*mode = m
	}
	return nil
}

// checkpointDir reads execution.checkpointing.dir (or Flink's older
// state.checkpoints.dir), with or without a file:// scheme.
func (st Settings) checkpointDir() string {
	for _, k := range []string{"execution.checkpointing.dir", "state.checkpoints.dir"} {
		if v := st[k]; v != "" {
			return strings.TrimPrefix(v, "file://")
		}
	}
	return ""
}

// savepointDir reads execution.checkpointing.savepoint-dir (or Flink's
// older state.savepoints.dir), with or without a file:// scheme.
func (st Settings) savepointDir() string {
	for _, k := range []string{"execution.checkpointing.savepoint-dir", "state.savepoints.dir"} {
		if v := st[k]; v != "" {
			return strings.TrimPrefix(v, "file://")
		}
	}
	return ""
}

// RuntimeOptions builds the job's runtime options from the settings.
func (st Settings) RuntimeOptions(jobName string) (runtime.Options, error) {
	var o runtime.Options
	o.JobID = jobName
	o.SavepointDir = st.savepointDir()
	interval, on, err := st.duration("execution.checkpointing.interval")
	if err != nil {
		return o, err
	}
	o.Checkpoint.Interval = interval
	// The mode is checked even when checkpointing is off: a typo must not
	// wait for the day the interval is set.
	mode, err := st.mode()
	if err != nil {
		return o, err
	}
	o.Mode = task.AtMostOnce
	if on {
		o.Mode = mode
		o.CheckpointDir = st.checkpointDir()
		if o.CheckpointDir == "" {
			o.CheckpointDir = ".weir/checkpoints/" + jobName
		}
	}
	if err := st.checkpointOptions(&o); err != nil {
		return o, err
	}
	if err := st.s3Options(&o.CheckpointStorage.S3); err != nil {
		return o, err
	}
	if err := st.debloatOptions(&o.Debloat); err != nil {
		return o, err
	}
	if o.WatermarkStallWarning, err = st.stallWarning(); err != nil {
		return o, err
	}
	o.Restore = strings.TrimPrefix(st["execution.savepoint.path"], "file://")
	if o.IgnoreUnclaimedState, err = st.bool("execution.savepoint.ignore-unclaimed-state"); err != nil {
		return o, err
	}
	if o.StateBackend, err = backends.FromConfig(st.get); err != nil {
		return o, fmt.Errorf("SET %w", err)
	}
	if !on {
		// Flink's default: no restarts when checkpointing is off (a restart
		// could only start over).
		o.Restart = runtime.NoRestart{}
	}
	return o, st.restartStrategy(&o)
}

// stallWarning reads Weir's weir.source.watermark-stall-warning: how long a
// source split without records may hold back event time before a warning
// says so (see runtime.Options.WatermarkStallWarning). Unset: the runtime's
// default, 1 min; '0': no warning.
func (st Settings) stallWarning() (time.Duration, error) {
	d, ok, err := st.duration("weir.source.watermark-stall-warning")
	if err != nil || !ok {
		return 0, err
	}
	if d == 0 {
		return -1, nil // the runtime's zero is its default
	}
	return d, nil
}

func (st Settings) mode() (task.Mode, error) {
	switch strings.ToUpper(st["execution.checkpointing.mode"]) {
	case "", "EXACTLY_ONCE":
		return task.ExactlyOnce, nil
	case "AT_LEAST_ONCE":
		return task.AtLeastOnce, nil
	}
	v := st["execution.checkpointing.mode"]
	hint := ""
	if m, ok := parser.Closest(strings.ToUpper(v), []string{"EXACTLY_ONCE", "AT_LEAST_ONCE"}); ok {
		hint = fmt.Sprintf("; hint: did you mean '%s'?", m)
	}
	return 0, fmt.Errorf("SET 'execution.checkpointing.mode' = '%s': want EXACTLY_ONCE or AT_LEAST_ONCE%s", v, hint)
}

// s3Options reads Flink's s3.* keys for an s3:// checkpoint directory:
// s3.endpoint, s3.access-key, s3.secret-key and s3.path.style.access.
// Unset, the AWS_* environment variables apply.
func (st Settings) s3Options(o *checkpointstorage.S3Options) error {
	o.Endpoint = st["s3.endpoint"]
	o.AccessKey, o.SecretKey = st["s3.access-key"], st["s3.secret-key"]
	if (o.AccessKey == "") != (o.SecretKey == "") {
		return fmt.Errorf("SET 's3.access-key' and 's3.secret-key' together (or neither, to use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
	}
	var err error
	o.PathStyle, err = st.bool("s3.path.style.access")
	return err
}

func (st Settings) checkpointOptions(o *runtime.Options) error {
	var err error
	set := func(key string, f func(time.Duration)) {
		if d, ok, e := st.duration(key); e != nil {
			err = e
		} else if ok {
			f(d)
		}
	}
	seti := func(key string, f func(int)) {
		if n, ok, e := st.int(key); e != nil {
			err = e
		} else if ok {
			f(n)
		}
	}
	set("execution.checkpointing.timeout", func(d time.Duration) { o.Checkpoint.Timeout = d })
	set("execution.checkpointing.min-pause", func(d time.Duration) { o.Checkpoint.MinPause = d })
	seti("execution.checkpointing.max-concurrent-checkpoints", func(n int) { o.Checkpoint.MaxConcurrent = n })
	seti("execution.checkpointing.tolerable-failed-checkpoints", func(n int) { o.Checkpoint.TolerableFailures = n })
	seti("state.checkpoints.num-retained", func(n int) { o.Retained = n })
	seti("execution.checkpointing.num-retained", func(n int) { o.Retained = n })
	seti("taskmanager.network.memory.max-buffers-per-channel", func(n int) { o.MaxBuffersPerChannel = n })
	set("execution.checkpointing.aligned-checkpoint-timeout", func(d time.Duration) { o.Checkpoint.AlignedTimeout = d })
	if on, e := st.bool("execution.checkpointing.unaligned.enabled"); e != nil {
		err = e
	} else if on {
		o.Checkpoint.Unaligned = true
	}
	return err
}

// debloatOptions reads Flink's buffer debloating options,
// taskmanager.network.memory.buffer-debloat.* (enabled, target, period,
// samples, threshold-percentages).
func (st Settings) debloatOptions(o *debloat.Options) error {
	const p = "taskmanager.network.memory.buffer-debloat."
	var err error
	if o.Enabled, err = st.bool(p + "enabled"); err != nil {
		return err
	}
	for key, f := range map[string]*time.Duration{"target": &o.Target, "period": &o.Period} {
		if d, ok, e := st.duration(p + key); e != nil {
			return e
		} else if ok {
			*f = d
		}
	}
	for key, f := range map[string]*int{"samples": &o.Samples, "threshold-percentages": &o.ThresholdPercent} {
		if n, ok, e := st.int(p + key); e != nil {
			return e
		} else if ok {
			*f = n
		}
	}
	return nil
}
