package weir_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// zeroTTL registers a state with a TTL under the 1 ms minimum in Open.
type zeroTTL struct{}

func (zeroTTL) Open(ctx *weir.RuntimeContext) error {
	weir.ValueStateOf[int](ctx, "n", weir.StateTTL(0))
	return nil
}

func (zeroTTL) ProcessElement(int, *weir.KeyedContext[int], weir.Emitter[int]) error { return nil }
func (zeroTTL) OnTimer(time.Time, *weir.KeyedContext[int], weir.Emitter[int]) error  { return nil }

// A keyed state registered wrongly in Open fails the job at once with an
// error naming the state, marked not restartable: under the default restart
// strategy (exponential delay, unbounded) the panic it used to be restarted
// the job forever. The context's timeout only keeps a regression from
// hanging the test.
func TestStateRegistrationMistakeFailsWithoutRestart(t *testing.T) {
	env := weir.NewEnvironment(weir.CheckpointDir(t.TempDir()))
	in := weir.FromSlice(env, []int{1, 2}, "numbers")
	weir.KeyedProcess(weir.KeyBy(in, func(n int) int { return n }),
		func() weir.KeyedProcessFunction[int, int, int] { return zeroTTL{} }, weir.UID("zero-ttl"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := env.Execute(ctx, "zero ttl")
	if !errors.Is(err, operator.ErrNonRestartable) || !errors.Is(err, state.ErrInvalidDescriptor) {
		t.Fatalf("Execute: %v; want an error wrapping operator.ErrNonRestartable and state.ErrInvalidDescriptor", err)
	}
	if !strings.Contains(err.Error(), `state "n"`) || !strings.Contains(err.Error(), "TTL 0s is below 1ms") {
		t.Errorf("error %q does not name the state and its TTL", err)
	}
	if res != nil && res.Restarts != 0 {
		t.Errorf("%d restarts, want 0", res.Restarts)
	}
}
