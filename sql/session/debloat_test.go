package session

import (
	"testing"
	"time"

	"github.com/weirstream/weir/debloat"
)

// Flink's buffer debloating options reach the runtime; unset is off with
// Flink's defaults (filled by the runtime), and a bad value names the key.
func TestBufferDebloatSettings(t *testing.T) {
	const p = "taskmanager.network.memory.buffer-debloat."
	o, err := Settings{}.RuntimeOptions("job")
	if err != nil {
		t.Fatal(err)
	}
	if o.Debloat != (debloat.Options{}) {
		t.Errorf("unset: %+v, want zero (off)", o.Debloat)
	}
	o, err = Settings{p + "enabled": "true", p + "target": "200 ms", p + "period": "50ms",
		p + "samples": "5", p + "threshold-percentages": "10"}.RuntimeOptions("job")
	if err != nil {
		t.Fatal(err)
	}
	want := debloat.Options{Enabled: true, Target: 200 * time.Millisecond, Period: 50 * time.Millisecond,
		Samples: 5, ThresholdPercent: 10}
	if o.Debloat != want {
		t.Errorf("set: %+v, want %+v", o.Debloat, want)
	}
	_, err = Settings{p + "samples": "many"}.RuntimeOptions("job")
	if want := `SET '` + p + `samples' = 'many': not an integer`; err == nil || err.Error() != want {
		t.Errorf("bad value: got %v, want %s", err, want)
	}
	if _, typo := misspelledSetting(p + "enable"); !typo {
		t.Errorf("%senable is not caught as a typo", p)
	}
}
