package session

import (
	"testing"

	"github.com/weirstream/weir/state/pebble"
)

// Flink's state.backend.rocksdb.checkpoint.transfer.thread.num (and its
// .pebble. spelling) reaches the Pebble backend from SET; a value under 1
// or not a whole number is refused, naming the key.
func TestTransferThreadsSetting(t *testing.T) {
	for _, key := range []string{"state.backend.rocksdb.checkpoint.transfer.thread.num", "state.backend.pebble.checkpoint.transfer.thread.num"} {
		o, err := Settings{"state.backend.type": "rocksdb", key: "2"}.RuntimeOptions("job")
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := o.StateBackend.(pebble.Factory); !ok || f.Options.TransferThreads != 2 {
			t.Fatalf("SET '%s' = '2': state backend %#v, want pebble with TransferThreads 2", key, o.StateBackend)
		}
		for _, bad := range []string{"0", "-1", "many"} {
			_, err := Settings{"state.backend.type": "rocksdb", key: bad}.RuntimeOptions("job")
			want := "SET '" + key + "' = '" + bad + "': want a whole number of files transferred at once per subtask, 1 or more (default 8)"
			if err == nil || err.Error() != want {
				t.Errorf("bad value: got %v, want %s", err, want)
			}
		}
		if _, typo := misspelledSetting(key); typo {
			t.Errorf("%s is taken for a typo", key)
		}
	}
}
