package session

import (
	"testing"
	"time"
)

// weir.source.watermark-stall-warning reaches the runtime: unset is the
// runtime's default, '0' turns the warning off, a bad value names the key.
func TestWatermarkStallWarningSetting(t *testing.T) {
	for _, c := range []struct {
		value string // "" for unset
		want  time.Duration
	}{
		{"", 0},
		{"5 min", 5 * time.Minute},
		{"30s", 30 * time.Second},
		{"0", -1},
	} {
		st := Settings{}
		if c.value != "" {
			st["weir.source.watermark-stall-warning"] = c.value
		}
		o, err := st.RuntimeOptions("job")
		if err != nil {
			t.Fatalf("%q: %v", c.value, err)
		}
		if o.WatermarkStallWarning != c.want {
			t.Errorf("%q: WatermarkStallWarning = %v, want %v", c.value, o.WatermarkStallWarning, c.want)
		}
	}
	_, err := Settings{"weir.source.watermark-stall-warning": "soon"}.RuntimeOptions("job")
	if want := `SET 'weir.source.watermark-stall-warning': "soon" is not a duration (e.g. '10 s', '500 ms', '1 min')`; err == nil || err.Error() != want {
		t.Errorf("bad value: got %v, want %s", err, want)
	}
}
