package session

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/sql/planner"
)

// KnownSettings are the configuration keys Weir reads (Flink's names, and
// weir.* for Weir's own). SET of another key is accepted, as Flink accepts
// any key, but a key within a typo of a known one is refused: a misspelled
// 'execution.checkpointing.interval' would otherwise run the job without
// checkpoints and say nothing.
var KnownSettings = []string{
	"execution.checkpointing.aligned-checkpoint-timeout",
	"execution.checkpointing.dir",
	"execution.checkpointing.incremental", // read by state/backends
	"execution.checkpointing.interval",
	"execution.checkpointing.max-concurrent-checkpoints",
	"execution.checkpointing.min-pause",
	"execution.checkpointing.mode",
	"execution.checkpointing.num-retained",
	"execution.checkpointing.savepoint-dir",
	"execution.checkpointing.timeout",
	"execution.checkpointing.tolerable-failed-checkpoints",
	"execution.checkpointing.unaligned.enabled",
	"execution.savepoint.ignore-unclaimed-state",
	"execution.savepoint.path",
	"metrics.reporter.prom.factory.class", // read by weir run (metrics/prom)
	"metrics.reporter.prom.host",
	"metrics.reporter.prom.port",
	"parallelism.default",
	"pipeline.name",
	"restart-strategy.exponential-delay.attempts-before-reset-backoff",
	"restart-strategy.exponential-delay.backoff-multiplier",
	"restart-strategy.exponential-delay.initial-backoff",
	"restart-strategy.exponential-delay.jitter-factor",
	"restart-strategy.exponential-delay.max-backoff",
	"restart-strategy.exponential-delay.reset-backoff-threshold",
	"restart-strategy.failure-rate.delay",
	"restart-strategy.failure-rate.failure-rate-interval",
	"restart-strategy.failure-rate.max-failures-per-interval",
	"restart-strategy.fixed-delay.attempts",
	"restart-strategy.fixed-delay.delay",
	"restart-strategy.type",
	"s3.access-key",
	"s3.endpoint",
	"s3.path.style.access",
	"s3.secret-key",
	"sql-client.execution.result-mode", // read by the SQL client (weir sql)
	"state.backend",                    // Flink 1.x's state.backend.type, read by state/backends
	"state.backend.changelog.enabled",
	"state.backend.incremental",
	"state.backend.local-dir",
	"state.backend.pebble.block.cache-size",
	"state.backend.pebble.checkpoint.transfer.thread.num",
	"state.backend.pebble.compaction.level.max-size-level-base",
	"state.backend.pebble.memory.fixed-per-slot",
	"state.backend.pebble.memory.write-buffer-ratio",
	"state.backend.pebble.writebuffer.count",
	"state.backend.pebble.writebuffer.size",
	"state.backend.rocksdb.block.cache-size",
	"state.backend.rocksdb.checkpoint.transfer.thread.num",
	"state.backend.rocksdb.compaction.level.max-size-level-base",
	"state.backend.rocksdb.localdir",
	"state.backend.rocksdb.memory.fixed-per-slot",
	"state.backend.rocksdb.memory.write-buffer-ratio",
	"state.backend.rocksdb.writebuffer.count",
	"state.backend.rocksdb.writebuffer.size",
	"state.backend.type",
	"state.checkpoints.dir",
	"state.checkpoints.num-retained",
	"state.savepoints.dir",
	"table.exec.mini-batch.allow-latency",
	"table.exec.mini-batch.enabled",
	"table.exec.mini-batch.size",
	"table.exec.sink.keyed-shuffle",
	"table.exec.sink.upsert-materialize",
	"table.exec.source.idle-timeout",
	"table.exec.source.max-future-skew",
	"table.exec.state.ttl",
	"table.local-time-zone",
	"table.optimizer.agg-phase-strategy",
	"taskmanager.memory.process.size", // read by weir run and weir jobmanager (the Go soft memory limit)
	"taskmanager.network.memory.buffer-debloat.enabled",
	"taskmanager.network.memory.buffer-debloat.period",
	"taskmanager.network.memory.buffer-debloat.samples",
	"taskmanager.network.memory.buffer-debloat.target",
	"taskmanager.network.memory.buffer-debloat.threshold-percentages",
	"taskmanager.network.memory.max-buffers-per-channel",
	"taskmanager.state.local.root-dirs",
	"weir.source.watermark-stall-warning",
	"weir.wasm-udf.memory",
	"weir.wasm-udf.on-error",
	"weir.wasm-udf.timeout",
}

// Set sets a configuration key, as SET 'key' = 'value' does. A key close
// to a known one but not known is an error with a did-you-mean; another
// unknown key is kept and a warning says Weir does not read it.
func (s *Session) Set(key, value string) error {
	if near, typo := misspelledSetting(key); typo {
		return fmt.Errorf("unknown option '%s'; did you mean '%s'?", key, near)
	}
	return s.setChecked(key, value)
}

// misspelledSetting returns the known key that key is a typo of. It logs
// a warning for an unknown key that is no typo.
func misspelledSetting(key string) (string, bool) {
	if slices.Contains(KnownSettings, key) {
		return "", false
	}
	if near, ok := parser.Closest(key, KnownSettings); ok {
		return near, true
	}
	slog.Warn("SET of an option Weir does not read; it has no effect", "key", key)
	return "", false
}

// setAt is Set for a SET statement: the error names its position.
func (s *Session) setAt(st *parser.SetStmt) error {
	if near, typo := misspelledSetting(st.Key); typo {
		return &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("unknown option '%s'", st.Key),
			Hint: fmt.Sprintf("did you mean '%s'?", near)}
	}
	if err := s.setChecked(st.Key, st.Value); err != nil {
		return &planner.Error{Pos: st.Pos, Msg: err.Error()}
	}
	return nil
}

// setChecked sets key and reads the settings as a job would (the planner's
// and the runtime's options): a value of key those readers refuse — SET
// 'parallelism.default' = 'abc' — is refused here, where the statement that
// set it is known, rather than at the next INSERT. The previous value
// stays. Errors about other keys, or about key together with another
// (mini-batch.enabled needs allow-latency, which may come next), are left
// to their readers.
func (s *Session) setChecked(key, value string) error {
	old, had := s.Settings[key]
	s.Settings[key] = value
	_, err := s.planner()
	if err == nil {
		_, err = s.Settings.RuntimeOptions("check")
	}
	if err == nil {
		_, err = s.Settings.wasmOptions()
	}
	if err == nil || !aboutOnly(err.Error(), key) {
		return nil
	}
	if had {
		s.Settings[key] = old
	} else {
		delete(s.Settings, key)
	}
	return err
}

// aboutOnly reports whether msg names key and no other known setting.
func aboutOnly(msg, key string) bool {
	if !strings.Contains(msg, "'"+key+"'") {
		return false
	}
	for _, k := range KnownSettings {
		if k != key && strings.Contains(msg, "'"+k+"'") {
			return false
		}
	}
	return true
}
