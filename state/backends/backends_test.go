package backends

import (
	"strconv"
	"strings"
	"testing"

	"github.com/weirstream/weir/state/heap"
	"github.com/weirstream/weir/state/pebble"
)

func from(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

func TestFromConfig(t *testing.T) {
	for _, c := range []struct {
		kv   map[string]string
		want string // factory type and options, or the error
	}{
		{map[string]string{KeyType: "HashMap"}, "hashmap incremental"},
		{map[string]string{KeyType: "pebble"}, "pebble {LocalDir: cache:0 wb:0x0}"},
		{map[string]string{KeyType: "rocksdb", "state.backend.rocksdb.block.cache-size": "64 mb",
			"state.backend.rocksdb.writebuffer.size": "32mb", "state.backend.rocksdb.writebuffer.count": "3",
			"taskmanager.state.local.root-dirs": "file:///data/a,/data/b"},
			"pebble {LocalDir:/data/a cache:67108864 wb:33554432x3}"},
		{map[string]string{KeyType: "pebble", KeyLocalDir: "/x", KeyBlockCacheSize: "1g"}, "pebble {LocalDir:/x cache:1073741824 wb:0x0}"},
		{map[string]string{KeyType: "rocksdb", "state.backend.rocksdb.memory.fixed-per-slot": "64mb"}, "pebble {LocalDir: cache:33554432 wb:16777216x2}"},
		{map[string]string{KeyType: "rocksdb", "state.backend.rocksdb.memory.fixed-per-slot": "100mb",
			"state.backend.rocksdb.memory.write-buffer-ratio": "0.25", KeyWriteBufferCount: "5"}, "pebble {LocalDir: cache:78643200 wb:5242880x5}"},
		{map[string]string{KeyType: "rocksdb", "state.backend.rocksdb.memory.fixed-per-slot": "64mb", "state.backend.rocksdb.block.cache-size": "8mb"},
			"'state.backend.rocksdb.memory.fixed-per-slot' and 'state.backend.rocksdb.block.cache-size' are both set"},
		{map[string]string{KeyType: "rocksdb", "state.backend.rocksdb.memory.write-buffer-ratio": "0.3"}, "needs 'state.backend.pebble.memory.fixed-per-slot'"},
		{map[string]string{KeyType: "rocksdb", KeyFixedPerSlot: "64mb", KeyWriteBufferRatio: "1.5"}, "want a number between 0 and 1"},
		{map[string]string{KeyType: "rocksdb", KeyFixedPerSlot: "100kb"}, "under the 64 KiB minimum"},
		{map[string]string{KeyType: "rocks"}, "'state.backend.type' = 'rocks': unknown state backend"},
		{map[string]string{"state.backend": "rocksdb"}, "pebble {LocalDir: cache:0 wb:0x0}"}, // Flink 1.x's key
		{map[string]string{"state.backend": "filesystem"}, "hashmap incremental"},
		{map[string]string{"state.backend": "rocks"}, "'state.backend' = 'rocks': unknown state backend"},
		{map[string]string{KeyType: "pebble", KeyWriteBufferSize: "12 parsecs"}, "'state.backend.pebble.writebuffer.size' = '12 parsecs': \"12 parsecs\" has an unknown unit"},
		{map[string]string{KeyType: "pebble", KeyWriteBufferCount: "1"}, "state.backend.pebble.writebuffer.count is 1; want 2 or more"},
		{map[string]string{KeyType: "pebble", KeyIncremental: "false"}, "pebble {LocalDir: cache:0 wb:0x0} full"},
		{map[string]string{KeyType: "rocksdb", "state.backend.incremental": "FALSE"}, "pebble {LocalDir: cache:0 wb:0x0} full"},
		{map[string]string{KeyType: "pebble", KeyIncremental: "true"}, "pebble {LocalDir: cache:0 wb:0x0}"},
		{map[string]string{KeyType: "hashmap", KeyIncremental: "true"}, "hashmap incremental"},
		{nil, "hashmap incremental"},
		{map[string]string{KeyIncremental: " False "}, "hashmap"},
		{map[string]string{"state.backend.incremental": "false"}, "hashmap"},
		{map[string]string{KeyIncremental: "1"}, "'execution.checkpointing.incremental' = '1': want 'true' or 'false'"},
		{map[string]string{KeyType: "pebble", KeyIncremental: "t"}, "'execution.checkpointing.incremental' = 't': want 'true' or 'false'"},
		{map[string]string{KeyType: "rocksdb", "state.backend.rocksdb.compaction.level.max-size-level-base": "256mb"},
			"pebble {LocalDir: cache:0 wb:0x0} lbase:268435456"},
		{map[string]string{KeyType: "pebble", KeyMaxSizeLevelBase: "100kb"},
			"state.backend.pebble.compaction.level.max-size-level-base is 102400; want 1 MiB or more"},
		{map[string]string{KeyType: "pebble", KeyIncremental: "sometimes"}, "'execution.checkpointing.incremental' = 'sometimes': want 'true' or 'false'"},
		{map[string]string{KeyType: "pebble", KeyChangelog: "false"}, "pebble {LocalDir: cache:0 wb:0x0} flushing"},
		{map[string]string{KeyType: "rocksdb", KeyChangelog: "TRUE"}, "pebble {LocalDir: cache:0 wb:0x0}"},
		{map[string]string{KeyType: "pebble", KeyChangelog: "no"}, "'state.backend.changelog.enabled' = 'no': want 'true' or 'false'"},
		{map[string]string{KeyType: "rocksdb", "state.backend.rocksdb.checkpoint.transfer.thread.num": "4"}, "pebble {LocalDir: cache:0 wb:0x0} threads:4"},
		{map[string]string{KeyType: "pebble", KeyTransferThreads: " 1 "}, "pebble {LocalDir: cache:0 wb:0x0} threads:1"},
		{map[string]string{KeyType: "pebble", KeyTransferThreads: "0"},
			"'state.backend.pebble.checkpoint.transfer.thread.num' = '0': want a whole number of files transferred at once per subtask, 1 or more (default 8)"},
		{map[string]string{KeyType: "pebble", "state.backend.rocksdb.checkpoint.transfer.thread.num": "-2"},
			"'state.backend.rocksdb.checkpoint.transfer.thread.num' = '-2': want a whole number"},
		{map[string]string{KeyType: "pebble", KeyTransferThreads: "four"}, "'state.backend.pebble.checkpoint.transfer.thread.num' = 'four': want a whole number"},
		{map[string]string{KeyType: "pebble", KeyTransferThreads: "2.5"}, "'state.backend.pebble.checkpoint.transfer.thread.num' = '2.5': want a whole number"},
	} {
		f, err := FromConfig(from(c.kv))
		var got string
		switch x := f.(type) {
		case nil:
			got = err.Error()
		case heap.Factory:
			got = x.Type()
			if x.Incremental {
				got += " incremental"
			}
		case pebble.Factory:
			o := x.Options
			got = x.Type() + " {LocalDir:" + o.LocalDir + " cache:" + itoa(o.BlockCacheSize) + " wb:" + itoa(o.WriteBufferSize) + "x" + itoa(int64(o.WriteBufferCount)) + "}"
			if o.DisableIncremental {
				got += " full"
			}
			if o.DisableChangelog {
				got += " flushing"
			}
			if o.MaxSizeLevelBase != 0 {
				got += " lbase:" + itoa(o.MaxSizeLevelBase)
			}
			if o.TransferThreads != 0 {
				got += " threads:" + itoa(int64(o.TransferThreads))
			}
		}
		if !strings.HasPrefix(got, c.want) && !strings.Contains(got, c.want) {
			t.Errorf("%v: got %q, want %q", c.kv, got, c.want)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
