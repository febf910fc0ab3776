package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// lockedBuffer is a bytes.Buffer safe for the client's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestClientLogsThroughSubtaskLogger: a reader without a Logger option
// logs through its subtask's logger, and so does its franz-go client: at
// debug level the client's own lines come out as JSON records of that
// logger, carrying the subtask's job, vertex and subtask attributes.
func TestClientLogsThroughSubtaskLogger(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	in := c.topic("in", 1)
	c.produce(in, 1, []string{`{"n":1}`})
	var buf lockedBuffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})).
		With("job", "j1", "vertex", "Source: in", "subtask", 0)
	src, err := NewSource[payload](Brokers(c.brokers), Topics(in), Bounded())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	splits, err := src.Enumerate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := src.CreateReader(operator.ReaderContext{Subtask: event.SubtaskID{Vertex: "Source: in"}, Parallelism: 1,
		Context: ctx, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddSplits(splits); err != nil {
		t.Fatal(err)
	}
	out := &collector{}
	if err := pollUntil(t, r, out, func() bool { return false }); err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	client := 0
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON record: %q: %v", line, err)
		}
		if msg, _ := rec["msg"].(string); strings.HasPrefix(msg, "kafka client: ") {
			client++
		}
		if rec["job"] != "j1" || rec["vertex"] != "Source: in" || rec["subtask"] != float64(0) {
			t.Errorf("a line without the subtask's attributes: %s", line)
		}
	}
	if client == 0 {
		t.Fatalf("no line from the franz-go client at debug level:\n%s", buf.String())
	}
}

// TestKgoLoggerLevel: the client logs debug lines only when the logger
// takes debug, else warnings and errors (its info lines are chatter).
func TestKgoLoggerLevel(t *testing.T) {
	for _, c := range []struct {
		level slog.Level
		want  kgo.LogLevel
	}{
		{slog.LevelDebug, kgo.LogLevelDebug},
		{slog.LevelInfo, kgo.LogLevelWarn},
		{slog.LevelWarn, kgo.LogLevelWarn},
		{slog.LevelError, kgo.LogLevelError},
		{slog.LevelError + 1, kgo.LogLevelNone},
	} {
		l := slog.New(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: c.level}))
		if got := (kgoLogger{l}).Level(); got != c.want {
			t.Errorf("slog level %v: client level %v, want %v", c.level, got, c.want)
		}
	}
}
