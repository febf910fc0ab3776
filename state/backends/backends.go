// Package backends picks the keyed state backend from Flink's
// configuration keys (Flink's StateBackendLoader): state.backend.type
// 'hashmap' (the heap backend, the default), 'pebble', or 'rocksdb' (an
// alias of 'pebble', so that a Flink configuration carries over), and the
// Pebble backend's directory and memory options.
package backends

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/heap"
	"github.com/weirstream/weir/state/pebble"
)

// The configuration keys this package reads.
const (
	KeyType             = "state.backend.type"
	KeyLocalDir         = "state.backend.local-dir"
	KeyBlockCacheSize   = "state.backend.pebble.block.cache-size"
	KeyWriteBufferSize  = "state.backend.pebble.writebuffer.size"
	KeyWriteBufferCount = "state.backend.pebble.writebuffer.count"
	// KeyFixedPerSlot is the whole memory budget of one subtask's
	// backend, split between memtables (KeyWriteBufferRatio of it) and
	// the block cache (Flink's state.backend.rocksdb.memory.fixed-per-slot;
	// a Weir subtask is a Flink slot's share).
	KeyFixedPerSlot     = "state.backend.pebble.memory.fixed-per-slot"
	KeyWriteBufferRatio = "state.backend.pebble.memory.write-buffer-ratio"
	// KeyIncremental turns incremental checkpoints off ('false'; default
	// 'true'): the Pebble backend's (new SSTs and WAL bytes) and the heap
	// backend's (a delta of the keys changed since the last checkpoint,
	// state/heap/incremental.go). Savepoints are always full.
	KeyIncremental = "execution.checkpointing.incremental"
	// KeyMaxSizeLevelBase is the size of the level L0 compacts into
	// (Flink's state.backend.rocksdb.compaction.level.max-size-level-base).
	KeyMaxSizeLevelBase = "state.backend.pebble.compaction.level.max-size-level-base"
	// KeyChangelog turns off the shipping of the Pebble backend's WAL by
	// its incremental checkpoints ('false': each checkpoint flushes the
	// memtables instead; default 'true' here, 'false' in Flink, whose
	// changelog is a log of its own; see pebble.Options.DisableChangelog).
	KeyChangelog = "state.backend.changelog.enabled"
	// KeyTransferThreads bounds how many files one subtask's backend
	// uploads (a checkpoint's new files) or fetches (a restore) at once
	// (Flink's state.backend.rocksdb.checkpoint.transfer.thread.num;
	// default 8 here, 4 in Flink: see pebble.Options.TransferThreads).
	KeyTransferThreads = "state.backend.pebble.checkpoint.transfer.thread.num"
)

// DefaultWriteBufferRatio is Flink's default share of the budget for
// memtables.
const DefaultWriteBufferRatio = 0.5

// aliases maps Flink's RocksDB option names to the Pebble ones.
var aliases = map[string]string{
	"state.backend.rocksdb.block.cache-size":                     KeyBlockCacheSize,
	"state.backend.rocksdb.writebuffer.size":                     KeyWriteBufferSize,
	"state.backend.rocksdb.writebuffer.count":                    KeyWriteBufferCount,
	"state.backend.rocksdb.localdir":                             KeyLocalDir,
	"taskmanager.state.local.root-dirs":                          KeyLocalDir,
	"state.backend.pebble.localdir":                              KeyLocalDir,
	"state.backend.rocksdb.memory.fixed-per-slot":                KeyFixedPerSlot,
	"state.backend.rocksdb.memory.write-buffer-ratio":            KeyWriteBufferRatio,
	"state.backend.incremental":                                  KeyIncremental, // Flink 1.x's name
	"state.backend":                                              KeyType,        // Flink 1.x's name
	"state.backend.rocksdb.compaction.level.max-size-level-base": KeyMaxSizeLevelBase,
	"state.backend.rocksdb.checkpoint.transfer.thread.num":       KeyTransferThreads,
}

// Keys are every key FromConfig reads, Weir's names and Flink's RocksDB
// aliases.
func Keys() []string {
	ks := []string{KeyType, KeyLocalDir, KeyBlockCacheSize, KeyWriteBufferSize, KeyWriteBufferCount, KeyFixedPerSlot, KeyWriteBufferRatio, KeyIncremental, KeyMaxSizeLevelBase, KeyChangelog, KeyTransferThreads}
	for a := range aliases {
		ks = append(ks, a)
	}
	return ks
}

// FromConfig returns the backend factory the configuration asks for; get
// returns a key's value. An unset state.backend.type is 'hashmap'. Errors
// name the key and the value.
func FromConfig(get func(key string) (string, bool)) (state.BackendFactory, error) {
	lookup := func(key string) (string, string, bool) {
		if v, ok := get(key); ok {
			return key, v, true
		}
		for a, k := range aliases {
			if v, ok := get(a); ok && k == key {
				return a, v, true
			}
		}
		return key, "", false
	}
	k, typ, _ := lookup(KeyType)
	switch t := strings.ToLower(strings.TrimSpace(typ)); t {
	case "", "hashmap", "heap", "filesystem", "jobmanager": // the last two: Flink 1.x's names of the heap backend
		return heapFactory(lookup)
	case "pebble", "rocksdb":
		return pebbleFactory(lookup)
	}
	return nil, fmt.Errorf("'%s' = '%s': unknown state backend; want 'hashmap' (in memory, the default), 'pebble' or 'rocksdb' (an alias of 'pebble', on local disk)", k, typ)
}

func pebbleFactory(lookup func(string) (string, string, bool)) (state.BackendFactory, error) {
	var o pebble.Options
	if _, v, ok := lookup(KeyLocalDir); ok {
		// Flink's root-dirs may list several directories; Weir uses the first.
		o.LocalDir = strings.TrimPrefix(strings.TrimSpace(strings.Split(v, ",")[0]), "file://")
	}
	for key, dst := range map[string]*int64{KeyBlockCacheSize: &o.BlockCacheSize, KeyWriteBufferSize: &o.WriteBufferSize,
		KeyMaxSizeLevelBase: &o.MaxSizeLevelBase} {
		k, v, ok := lookup(key)
		if !ok {
			continue
		}
		n, err := ParseMemorySize(v)
		if err != nil {
			return nil, fmt.Errorf("'%s' = '%s': %w", k, v, err)
		}
		*dst = n
	}
	if k, v, ok := lookup(KeyWriteBufferCount); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("'%s' = '%s': not an integer", k, v)
		}
		o.WriteBufferCount = n
	}
	if k, v, ok := lookup(KeyTransferThreads); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("'%s' = '%s': want a whole number of files transferred at once per subtask, 1 or more (default %d)", k, v, pebble.DefaultTransferThreads)
		}
		o.TransferThreads = n
	}
	for key, dst := range map[string]*bool{KeyIncremental: &o.DisableIncremental, KeyChangelog: &o.DisableChangelog} {
		if k, v, ok := lookup(key); ok {
			on, err := parseBool(v)
			if err != nil {
				return nil, fmt.Errorf("'%s' = '%s': want 'true' or 'false'", k, v)
			}
			*dst = !on
		}
	}
	if err := fixedPerSlot(lookup, &o); err != nil {
		return nil, err
	}
	check := o
	check.EnsureDefaults()
	if err := check.Validate(); err != nil {
		return nil, err
	}
	return pebble.Factory{Options: o}, nil
}

func heapFactory(lookup func(string) (string, string, bool)) (state.BackendFactory, error) {
	f := heap.Factory{Incremental: true}
	if k, v, ok := lookup(KeyIncremental); ok {
		on, err := parseBool(v)
		if err != nil {
			return nil, fmt.Errorf("'%s' = '%s': want 'true' or 'false'", k, v)
		}
		f.Incremental = on
	}
	return f, nil
}

// parseBool reads a boolean option as Flink does: 'true' or 'false', in
// any case ('1', 't' and the like, which strconv.ParseBool takes, are
// refused: Flink refuses them).
func parseBool(v string) (bool, error) {
	switch v = strings.TrimSpace(v); {
	case strings.EqualFold(v, "true"):
		return true, nil
	case strings.EqualFold(v, "false"):
		return false, nil
	}
	return false, fmt.Errorf("not a boolean: %q", v)
}

// fixedPerSlot splits a fixed-per-slot budget, if set, into memtables
// (write-buffer-ratio of it, in writebuffer.count memtables) and the block
// cache (the rest). It may not be combined with the sizes it sets.
func fixedPerSlot(lookup func(string) (string, string, bool), o *pebble.Options) error {
	k, v, ok := lookup(KeyFixedPerSlot)
	if !ok {
		if rk, rv, ok := lookup(KeyWriteBufferRatio); ok {
			return fmt.Errorf("'%s' = '%s' needs '%s' (or Flink's state.backend.rocksdb.memory.fixed-per-slot): the ratio splits that budget", rk, rv, KeyFixedPerSlot)
		}
		return nil
	}
	budget, err := ParseMemorySize(v)
	if err != nil {
		return fmt.Errorf("'%s' = '%s': %w", k, v, err)
	}
	for _, other := range []string{KeyBlockCacheSize, KeyWriteBufferSize} {
		if name, set := lookupKey(lookup, other); set {
			return fmt.Errorf("'%s' and '%s' are both set: the budget sets the block cache and write buffer sizes itself; drop one", k, name)
		}
	}
	ratio := DefaultWriteBufferRatio
	if rk, rv, ok := lookup(KeyWriteBufferRatio); ok {
		ratio, err = strconv.ParseFloat(strings.TrimSpace(rv), 64)
		if err != nil || ratio <= 0 || ratio >= 1 {
			return fmt.Errorf("'%s' = '%s': want a number between 0 and 1 (exclusive), e.g. 0.5", rk, rv)
		}
	}
	if o.WriteBufferCount == 0 {
		o.WriteBufferCount = pebble.DefaultWriteBufferCount
	}
	o.WriteBufferSize = int64(float64(budget)*ratio) / int64(o.WriteBufferCount)
	o.BlockCacheSize = budget - o.WriteBufferSize*int64(o.WriteBufferCount)
	if o.WriteBufferSize < 64<<10 {
		return fmt.Errorf("'%s' = '%s': each of the %d write buffers would get %d bytes, under the 64 KiB minimum; raise the budget", k, v, o.WriteBufferCount, o.WriteBufferSize)
	}
	return nil
}

// lookupKey returns the name under which key is set ("" when it is not).
func lookupKey(lookup func(string) (string, string, bool), key string) (string, bool) {
	k, _, ok := lookup(key)
	if !ok {
		return "", false
	}
	return k, true
}

// ParseMemorySize reads Flink's memory size syntax: "64mb", "64 MB",
// "1g", "512k", "1024" (bytes). Units are binary (1 kb = 1024 bytes).
func ParseMemorySize(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.TrimSpace(s[i:])
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a memory size (e.g. '64 mb', '1 gb', '4096')", s)
	}
	mult := map[string]int64{"": 1, "b": 1, "bytes": 1, "k": 1 << 10, "kb": 1 << 10, "kibibytes": 1 << 10,
		"m": 1 << 20, "mb": 1 << 20, "mebibytes": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gibibytes": 1 << 30,
		"t": 1 << 40, "tb": 1 << 40, "tebibytes": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q has an unknown unit %q (use b, kb, mb, gb or tb)", s, unit)
	}
	return n * mult, nil
}
