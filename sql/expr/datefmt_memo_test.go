package expr

import (
	"math/rand"
	"testing"
	"time"
)

// TestDateFormatMemo: formatTime, which remembers the last unit (day,
// hour, minute, second) it printed, prints what rendering each time
// prints, for times walking forwards and backwards over unit boundaries,
// before and after the epoch, in UTC and another zone.
func TestDateFormatMemo(t *testing.T) {
	patterns := []string{"yyyy-MM-dd", "HH:mm", "yyyy-MM-dd HH:mm:ss", "EEE w D 'week' W", "hh a", "yyyy-MM-dd HH:mm:ss.SSS",
		"ss", "yyyy-MM-dd'T'HH:mm:ssXXX Z"}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zone data:", err)
	}
	rng := rand.New(rand.NewSource(1))
	for _, p := range patterns {
		f, err := compileDateFormat(p)
		if err != nil {
			t.Fatal(err)
		}
		ms := int64(-3 * 86_400_000)
		for i := 0; i < 20_000; i++ {
			steps := []int64{1, 999, 59_999, 3_599_999, 86_399_999, -1, -86_400_000}
			ms += steps[rng.Intn(len(steps))] * int64(rng.Intn(3))
			tm := time.UnixMilli(ms).UTC()
			if i%7 == 0 {
				tm = tm.In(ny)
			}
			if got, want := f.formatTime(tm), f.render(tm, true); got != want {
				t.Fatalf("%q at %v (%d ms): %q, rendered %q", p, tm, ms, got, want)
			}
		}
	}
}
