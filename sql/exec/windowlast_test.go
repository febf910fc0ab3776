package exec

import (
	"math/rand"
	"testing"
	"time"
)

// TestLastWindowOfSlice checks lastWindowOfSlice against the last of
// windowsOfSlice for every kind of sliced window, slices either side of
// the epoch and offsets.
func TestLastWindowOfSlice(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 2000; i++ {
		step := time.Duration(1+rng.Intn(5)) * time.Second
		size := step * time.Duration(1+rng.Intn(6))
		offset := time.Duration(rng.Intn(int(size/time.Millisecond))) * time.Millisecond
		specs := []WindowSpec{
			{Kind: Tumble, Size: size, Offset: offset},
			{Kind: Hop, Size: size, Slide: step, Offset: offset},
			{Kind: Cumulate, Size: size, Step: step, Offset: offset},
		}
		for _, w := range specs {
			if err := w.Validate(); err != nil {
				t.Fatalf("%+v: %v", w, err)
			}
			ss := w.sliceStart(rng.Int63n(1<<40) - 1<<39)
			wins := w.windowsOfSlice(ss)
			if got, want := w.lastWindowOfSlice(ss), wins[len(wins)-1]; got != want {
				t.Fatalf("%+v, slice at %d: last window %v, want %v (of %v)", w, ss, got, want, wins)
			}
		}
	}
}
