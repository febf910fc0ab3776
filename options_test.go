package weir_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// TestExecuteReturnsConstructionErrors: mistakes in the declaration come
// back from Execute, each naming the operator or setting, and nothing runs.
// Before, Window, AllowedLateness and the window assigners panicked.
func TestExecuteReturnsConstructionErrors(t *testing.T) {
	env := weir.NewEnvironment(weir.Parallelism(0))
	src := weir.FromSlice(env, []int{1, 2}, "numbers")
	keyed := weir.KeyBy(src, func(int) int { return 0 })
	weir.WindowReduce(weir.Window(keyed, weir.EventTimeSessionWindows(0)), func(a, b int) int { return a + b })
	weir.WindowReduce(weir.Window(keyed, weir.TumblingEventTimeWindows(time.Second)).AllowedLateness(-time.Second),
		func(a, b int) int { return a + b })
	weir.Map(src, func(v int) int { return v }, weir.Name("double"), weir.Parallelism(-1),
		weir.Watermarks(weir.BoundedOutOfOrderness(0), func(int) time.Time { return time.Time{} }))
	res, err := env.Execute(context.Background(), "bad")
	want := `weir: Parallelism(0): use 1 or more
weir: Window: window: invalid options: Session.Gap is 0s; it must be at least 1ms
weir: AllowedLateness(-1s): use 0 or a positive whole number of milliseconds
weir: Parallelism(-1) on "double": use 1 or more
weir: Watermarks on "double": only a source assigns event time`
	if err == nil || err.Error() != want || res != nil {
		t.Fatalf("Execute = %v, %v; want the errors\n%s", res, err, want)
	}
	if _, err := env.Explain("bad"); err == nil || err.Error() != want {
		t.Fatalf("Explain error = %v", err)
	}
}

// TestOperatorOptionsKeepSourceAndSinkPrefixes: Name on a source or a
// sink keeps the prefix the runtime recognises them by.
func TestOperatorOptionsKeepSourceAndSinkPrefixes(t *testing.T) {
	env := weir.NewEnvironment(weir.Guarantee(weir.AtMostOnce))
	src := weir.FromSlice(env, []int{1}, "numbers", weir.Name("nums"), weir.UID("nums"))
	weir.Print(weir.Map(src, func(v int) int { return v }, weir.Name("copy"), weir.DisableChaining()), weir.Name("out"))
	plan, err := env.Explain("names")
	want := `== Job "names": 2 operator chains ==
[0] Source: nums (parallelism 1)
[1] copy -> Sink: out (parallelism 1)
    <- [0] FORWARD, input 1
`
	if err != nil || plan != want {
		t.Fatalf("Explain = %q, %v; want %q", plan, err, want)
	}
}

func TestEndOfTimeIsTheMaxWatermark(t *testing.T) {
	if got := weir.EndOfTime.UnixMilli(); got != math.MaxInt64 {
		t.Fatalf("EndOfTime.UnixMilli() = %d", got)
	}
}
