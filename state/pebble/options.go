package pebble

import (
	"fmt"
	"os"
	"time"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
)

// Options configures a keyed Pebble Backend. A backend's memory is bounded
// by BlockCacheSize + WriteBufferSize × WriteBufferCount (plus Pebble's
// small fixed overhead and the iterators in use), whatever the state size.
type Options struct {
	// KeyGroupRange is the key groups the subtask owns, usually
	// keygroup.RangeFor(MaxParallelism, parallelism, index). No default:
	// the zero value is the single key group 0. An empty range is allowed.
	KeyGroupRange keygroup.Range
	// MaxParallelism is the number of key groups; it cannot change across
	// restores. Default keygroup.DefaultMaxParallelism (128).
	MaxParallelism int
	// KeyCodec encodes the stream's keys, in Pebble keys and in snapshots.
	// Equal keys must encode to equal bytes. Default state.AnyCodec{}.
	KeyCodec state.Codec[any]
	// Clock returns the processing time in ms since the epoch, for TTL.
	// Default time.Now().UnixMilli.
	Clock func() int64
	// LocalDir is the working directory under which the backend creates
	// its own directory, removed by Close (state.backend.local-dir); the
	// first backend a process opens there removes the directories of
	// processes that are gone (localdir.go).
	// Default os.TempDir().
	LocalDir string
	// Name names the backend's directory (with a random suffix), e.g. the
	// operator UID and subtask index. Default "keyed".
	Name string
	// BlockCacheSize is the size in bytes of the cache of uncompressed
	// SST blocks (state.backend.rocksdb.block.cache-size, or .pebble.).
	// Default 64 MiB: it was 8 MiB, and Nexmark q5 on Pebble (1 M events,
	// 1 s checkpoints), whose windows read all their state when they fire,
	// took 32.8 s of CPU with 8 MiB and 13.8 s with 64 MiB (peak RSS 243 →
	// 266 MB); its final checkpoint, which waits for that firing, 58 → 28 s.
	BlockCacheSize int64
	// WriteBufferSize is the size in bytes of one memtable
	// (state.backend.rocksdb.writebuffer.size, or .pebble.). Default 16 MiB.
	WriteBufferSize int64
	// WriteBufferCount is how many memtables may exist, the one being
	// written and those waiting for their flush, before writes stall
	// (state.backend.rocksdb.writebuffer.count, or .pebble.). Default 2.
	WriteBufferCount int
	// MaxSizeLevelBase is the size in bytes of the level L0 compacts into,
	// Lbase (state.backend.rocksdb.compaction.level.max-size-level-base,
	// or .pebble.; Pebble's LBaseMaxBytes). An L0 compaction rewrites all
	// of Lbase: files the next incremental checkpoint uploads again; with
	// DisableChangelog every checkpoint flushes the memtables into a small
	// L0 SST overlapping every key, so L0 compactions are frequent. The
	// measurements below are of that mode. A smaller Lbase bounds that rewrite, at the
	// price of more levels for reads to pass. Measured (Nexmark, 1 M
	// events, 1 s checkpoints, 2 shared cores): q18 (36 MB of state)
	// uploads 382–426 MB over the run at 64 MiB, 194–205 MB at 8 MiB, CPU
	// within noise; q5, whose windows read all their state when they fire,
	// takes 31.7/34.3 s of CPU at 64 MiB and 37.6/42.9 s at 8 MiB. Default
	// 64 MiB (Pebble's; RocksDB's in Flink is 256 MiB): lower it for a job
	// that writes much state and checkpoints often.
	MaxSizeLevelBase int64
	// DisableIncremental makes every checkpoint a full canonical snapshot
	// (execution.checkpointing.incremental = false). Default false:
	// checkpoints are incremental (see incremental.go); savepoints are
	// canonical either way.
	DisableIncremental bool
	// ExperimentalRemote, EXPERIMENTAL, turns on disaggregated state
	// (Flink 2.0's ForSt): SSTs are created in checkpoint storage itself
	// and read from there, a checkpoint names them instead of uploading
	// them, a restore opens them in place (remote.go). Checkpoints must go
	// to that storage, incremental. Default nil: every SST is local.
	ExperimentalRemote *RemoteOptions
	// DisableChangelog makes each incremental checkpoint flush the
	// memtables into an SST (state.backend.changelog.enabled = false),
	// as before the WAL was shipped. Default false: the database keeps a
	// WAL (never fsynced) and an incremental checkpoint uploads the WAL
	// bytes written since the previous one instead of flushing, so
	// memtables flush at their full size (changelog.go). Flink's key,
	// whose default there is false: in Flink the changelog is a separate
	// log written beside the backend, here it is Pebble's own WAL, so it
	// costs little and is on by default. Ignored when DisableIncremental,
	// and with ExperimentalRemote, whose checkpoints flush.
	DisableChangelog bool
	// TransferThreads bounds how many files this backend (one subtask's)
	// transfers at once: the new SSTs and WAL chunks an incremental
	// checkpoint uploads, and the files a restore fetches (Flink's
	// state.backend.rocksdb.checkpoint.transfer.thread.num, or .pebble.;
	// per subtask as there). Default 8 where Flink's is 4: one file at a
	// time, a restore from S3 waits for every request's round trip in
	// turn, and 8 at once took a 1 GB restore from the S3 test server from
	// 18.5 s to 7.1 s to the first record (bench/nexmark/README.md,
	// "restore phases"). Uploads are also bounded by the checkpoint
	// storage's UploadConcurrency over all subtasks of the process.
	TransferThreads int
	// RestoreFiles is where Restore fetches the files an incremental
	// snapshot's manifest names: the storage of the checkpoint being
	// restored. Nil when not restoring from files.
	RestoreFiles state.RestoreFiles
}

// Defaults of the memory options.
const (
	DefaultBlockCacheSize   = 64 << 20
	DefaultWriteBufferSize  = 16 << 20
	DefaultWriteBufferCount = 2
	DefaultMaxSizeLevelBase = 64 << 20
	DefaultTransferThreads  = 8
)

// EnsureDefaults fills in the defaults of unset fields.
func (o *Options) EnsureDefaults() {
	if o.MaxParallelism == 0 {
		o.MaxParallelism = keygroup.DefaultMaxParallelism
	}
	if o.KeyCodec == nil {
		o.KeyCodec = state.AnyCodec{}
	}
	if o.Clock == nil {
		o.Clock = func() int64 { return time.Now().UnixMilli() }
	}
	if o.LocalDir == "" {
		o.LocalDir = os.TempDir()
	}
	if o.Name == "" {
		o.Name = "keyed"
	}
	if o.BlockCacheSize == 0 {
		o.BlockCacheSize = DefaultBlockCacheSize
	}
	if o.WriteBufferSize == 0 {
		o.WriteBufferSize = DefaultWriteBufferSize
	}
	if o.WriteBufferCount == 0 {
		o.WriteBufferCount = DefaultWriteBufferCount
	}
	if o.MaxSizeLevelBase == 0 {
		o.MaxSizeLevelBase = DefaultMaxSizeLevelBase
	}
	if o.TransferThreads == 0 {
		o.TransferThreads = DefaultTransferThreads
	}
}

// Validate checks the options (after EnsureDefaults). Errors name the
// configuration key of the option.
func (o *Options) Validate() error {
	if err := keyed.ValidateKeyGroups("pebble", o.MaxParallelism, o.KeyGroupRange); err != nil {
		return err
	}
	switch {
	case o.BlockCacheSize < 0:
		return fmt.Errorf("pebble: state.backend.pebble.block.cache-size is %d; want 0 or more bytes", o.BlockCacheSize)
	case o.WriteBufferSize < 64<<10 || o.WriteBufferSize >= 4<<30:
		return fmt.Errorf("pebble: state.backend.pebble.writebuffer.size is %d; want 64 KiB to 4 GiB", o.WriteBufferSize)
	case o.WriteBufferCount < 2:
		return fmt.Errorf("pebble: state.backend.pebble.writebuffer.count is %d; want 2 or more", o.WriteBufferCount)
	case o.MaxSizeLevelBase < 1<<20:
		return fmt.Errorf("pebble: state.backend.pebble.compaction.level.max-size-level-base is %d; want 1 MiB or more", o.MaxSizeLevelBase)
	case o.TransferThreads < 1:
		return fmt.Errorf("pebble: state.backend.pebble.checkpoint.transfer.thread.num is %d; want 1 or more", o.TransferThreads)
	case o.ExperimentalRemote != nil:
		return o.ExperimentalRemote.validate()
	}
	return nil
}

// changelog reports whether the database keeps a WAL that incremental
// checkpoints ship (see DisableChangelog). Disaggregated state
// (ExperimentalRemote) keeps flushing at every checkpoint for now: its
// checkpoint names the remote SSTs the flush made, and its tests and
// measurements are of that.
func (o *Options) changelog() bool {
	return !o.DisableIncremental && !o.DisableChangelog && o.ExperimentalRemote == nil
}

// MemoryBudget is the memory the options give a backend's caches and
// memtables, in bytes.
func (o *Options) MemoryBudget() int64 {
	return o.BlockCacheSize + o.WriteBufferSize*int64(o.WriteBufferCount)
}
