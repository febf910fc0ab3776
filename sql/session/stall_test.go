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

// The future-skew guard is on by default in SQL, at a day
// (planner.DefaultMaxFutureSkew); a SET changes it and '0' turns it off.
func TestMaxFutureSkewDefault(t *testing.T) {
	for _, c := range []struct {
		value string // "" for unset
		want  time.Duration
	}{
		{"", 24 * time.Hour},
		{"1 h", time.Hour},
		{"0", 0},
	} {
		s := New()
		if c.value != "" {
			if err := s.Set("table.exec.source.max-future-skew", c.value); err != nil {
				t.Fatal(err)
			}
		}
		p, err := s.planner()
		if err != nil {
			t.Fatalf("%q: %v", c.value, err)
		}
		if p.Config.MaxFutureSkew != c.want {
			t.Errorf("%q: MaxFutureSkew = %v, want %v", c.value, p.Config.MaxFutureSkew, c.want)
		}
	}
}
