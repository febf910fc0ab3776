package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/task"
)

// positioned is a failure at a position of the input, as a bad record is.
type positioned struct{ pos string }

func (e positioned) Error() string    { return "bad record at " + e.pos }
func (e positioned) Position() string { return e.pos }

// nowClock is a fake Options.Now; the sink moves it.
type nowClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *nowClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *nowClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// agingSink fails to open with err, after the job "ran" for ran on the
// fake clock.
type agingSink struct {
	c   *nowClock
	ran time.Duration
	err error
}

func (s agingSink) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	s.c.advance(s.ran)
	return nil, s.err
}
func (agingSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

// The same error at the same position after a restart fails the job once,
// with a RecurringFailureError; the restart strategy is not asked again.
// Positions are forgotten after an hour without a failure there (on the
// job's clock, Options.Now): failures two hours apart each restart, until
// the strategy's own limit.
func TestRecurringFailureFailsOnce(t *testing.T) {
	for _, c := range []struct {
		ran      time.Duration
		restarts int
		want     string
	}{
		{time.Minute, 1, "runtime: job failed after 1 restarts: the same failure recurred at topic t partition 0 offset 7 " +
			"after a restart from the start; restarting again cannot get past it, so the job stops: subtask "},
		{2 * time.Hour, 3, "runtime: job failed after 3 restarts (fixed-delay: 3 restarts ('restart-strategy.fixed-delay.attempts' = '3')): subtask "},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		clk := &nowClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		sink := agingSink{c: clk, ran: c.ran, err: positioned{pos: "topic t partition 0 offset 7"}}
		res, err := Run(ctx, sinkJob(t, countSource{n: 3}, sink), Options{Mode: task.AtMostOnce, Now: clk.Now,
			Restart: FixedDelay{Attempts: 3, Delay: 0}})
		cancel()
		var rec *RecurringFailureError
		if recurred := errors.As(err, &rec); recurred != (c.restarts == 1) {
			t.Errorf("ran %v: recurring %v: %v", c.ran, recurred, err)
		}
		const cause = "create writer: bad record at topic t partition 0 offset 7"
		if err == nil || res.Restarts != c.restarts || !strings.HasPrefix(err.Error(), c.want) || !strings.HasSuffix(err.Error(), cause) {
			t.Errorf("ran %v: %d restarts, err %v\nwant %d restarts and\n%s…%s", c.ran, res.Restarts, err, c.restarts, c.want, cause)
		}
	}
}
