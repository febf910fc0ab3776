package session

import "testing"

// Flink's taskmanager.network.memory.max-buffers-per-channel reaches the
// runtime as the output queue limit; unset leaves the runtime's default,
// and a bad value names the key.
func TestMaxBuffersPerChannelSetting(t *testing.T) {
	const key = "taskmanager.network.memory.max-buffers-per-channel"
	o, err := Settings{}.RuntimeOptions("job")
	if err != nil {
		t.Fatal(err)
	}
	if o.MaxBuffersPerChannel != 0 {
		t.Errorf("unset: %d, want 0 (the runtime's default)", o.MaxBuffersPerChannel)
	}
	o, err = Settings{key: "8"}.RuntimeOptions("job")
	if err != nil {
		t.Fatal(err)
	}
	if o.MaxBuffersPerChannel != 8 {
		t.Errorf("set to 8: %d", o.MaxBuffersPerChannel)
	}
	_, err = Settings{key: "many"}.RuntimeOptions("job")
	if want := `SET '` + key + `' = 'many': not an integer`; err == nil || err.Error() != want {
		t.Errorf("bad value: got %v, want %s", err, want)
	}
}
