package watermark

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/event"
)

// Valve combines the watermarks of a task's input channels into the task's
// input watermark, as Flink's StatusWatermarkValve does. The output is the
// minimum over the channels that are active, not finished and aligned, and it
// only ever increases.
//
// A channel is aligned when its watermark is at or above the output. An idle
// channel that turns active behind the output is therefore left out of the
// minimum until it catches up: it must not pull event time back.
//
// Unlike Flink, which advances to the maximum watermark over all channels
// when the last active one turns idle, the Valve then emits nothing: idleness
// alone never moves event time.
//
// Each call costs O(channels), which is fine for the fan-in of one task.
type Valve struct {
	chans []channel
	out   event.Timestamp
}

type channel struct {
	wm       event.Timestamp // highest watermark received
	idle     bool
	finished bool
}

// NewValve returns a valve for n input channels, numbered 0..n-1, all active
// at MinWatermark. It panics if n < 1.
func NewValve(n int) *Valve {
	if n < 1 {
		panic(fmt.Sprintf("watermark: NewValve needs at least one channel, got %d", n))
	}
	v := &Valve{chans: make([]channel, n), out: event.MinWatermark}
	for i := range v.chans {
		v.chans[i].wm = event.MinWatermark
	}
	return v
}

// OnWatermark records watermark wm read from channel ch and returns the
// output watermark and whether it advanced. A watermark at or below the
// channel's previous one changes nothing. A watermark read from an idle
// channel is remembered but counts only once the channel turns active; one
// read from a finished channel is ignored.
func (v *Valve) OnWatermark(ch int, wm event.Timestamp) (out event.Timestamp, advanced bool) {
	c := v.channel(ch)
	if c.finished || wm <= c.wm {
		return v.out, false
	}
	c.wm = wm
	if c.idle {
		return v.out, false
	}
	return v.advance()
}

// OnIdle marks channel ch idle, leaving it out of the minimum, which may
// advance the output. allIdle reports whether every unfinished channel is now
// idle; the task then forwards an Idle status downstream.
func (v *Valve) OnIdle(ch int) (out event.Timestamp, advanced bool, allIdle bool) {
	if c := v.channel(ch); !c.finished {
		c.idle = true
	}
	return v.settle()
}

// OnActive marks channel ch active again. If its watermark is behind the
// output it is not counted until it catches up. When all channels were idle,
// this may advance the output to the channel's watermark.
func (v *Valve) OnActive(ch int) (out event.Timestamp, advanced bool, allIdle bool) {
	v.channel(ch).idle = false
	return v.settle()
}

// OnEndOfInput marks channel ch finished: it leaves the minimum for good,
// which may advance the output. When every channel has finished, the output
// stays whatever was last emitted; a bounded upstream that wants its timers
// fired sends MaxWatermark before its end.
func (v *Valve) OnEndOfInput(ch int) (out event.Timestamp, advanced bool, allIdle bool) {
	c := v.channel(ch)
	c.finished, c.idle = true, false
	return v.settle()
}

// Watermark returns the output watermark: MinWatermark until it first
// advances.
func (v *Valve) Watermark() event.Timestamp { return v.out }

// AllIdle reports whether every unfinished channel is idle (false when all
// have finished).
func (v *Valve) AllIdle() bool {
	open := 0
	for _, c := range v.chans {
		if c.finished {
			continue
		}
		open++
		if !c.idle {
			return false
		}
	}
	return open > 0
}

// String shows the output and each channel, e.g.
// "out=5 [0:7 1:5 2:3(idle) 3:end]", for logs and tests.
func (v *Valve) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "out=%s [", Format(v.out))
	for i, c := range v.chans {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:", i)
		switch {
		case c.finished:
			b.WriteString("end")
		case c.idle:
			fmt.Fprintf(&b, "%s(idle)", Format(c.wm))
		default:
			b.WriteString(Format(c.wm))
		}
	}
	b.WriteByte(']')
	return b.String()
}

func (v *Valve) channel(ch int) *channel {
	if ch < 0 || ch >= len(v.chans) {
		panic(fmt.Sprintf("watermark: channel %d out of range [0, %d)", ch, len(v.chans)))
	}
	return &v.chans[ch]
}

func (v *Valve) settle() (event.Timestamp, bool, bool) {
	out, advanced := v.advance()
	return out, advanced, v.AllIdle()
}

// advance raises the output to the minimum over the aligned channels.
func (v *Valve) advance() (event.Timestamp, bool) {
	low, ok := v.minAligned()
	if !ok || low <= v.out {
		return v.out, false
	}
	v.out = low
	return v.out, true
}

// minAligned returns the lowest watermark among the active, unfinished
// channels that are at or above the output; ok is false if there are none.
func (v *Valve) minAligned() (low event.Timestamp, ok bool) {
	low = event.MaxWatermark
	for _, c := range v.chans {
		if c.idle || c.finished || c.wm < v.out {
			continue
		}
		low, ok = min(low, c.wm), true
	}
	return low, ok
}

// Format renders a watermark for logs: "MIN", "MAX", or the milliseconds.
func Format(wm event.Timestamp) string {
	switch wm {
	case event.MinWatermark:
		return "MIN"
	case event.MaxWatermark:
		return "MAX"
	}
	return fmt.Sprint(wm)
}
