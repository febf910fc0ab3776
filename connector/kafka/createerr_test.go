package kafka

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// badServers is what the sink's errors say of a malformed broker address.
const badServers = `properties.bootstrap.servers "127.0.0.1:notaport"`

// TestCreateErrorsAreUntypedNil: when the sink's writer or committer cannot
// be made, the caller gets the real error and a nil interface — not a nil
// *txnWriter inside a non-nil interface, which the SinkOperator closed
// (a nil-pointer panic that hid the error). Each case runs the sink the
// way the runtime does: Open of a SinkOperator, then Close.
func TestCreateErrorsAreUntypedNil(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	cases := []struct {
		name string
		opts []SinkOption
		want string
	}{
		{"bad bootstrap servers, at-least-once",
			[]SinkOption{Brokers("127.0.0.1:notaport"), Guarantee(delivery.AtLeastOnce)}, badServers},
		{"bad bootstrap servers, exactly-once",
			[]SinkOption{Brokers("127.0.0.1:notaport"), Guarantee(delivery.ExactlyOnce)}, badServers},
		{"transaction timeout not above the interval",
			[]SinkOption{Brokers(c.brokers), Guarantee(delivery.ExactlyOnce), TransactionTimeout(time.Second),
				CheckpointInterval(5 * time.Second)}, "not larger than the checkpoint interval"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sink, err := NewSink[string](append([]SinkOption{Topic("unused"), TransactionalIDPrefix("create-err")}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			w, err := sink.CreateWriter(writerContext())
			if w != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CreateWriter = %#v, %v; want a nil writer and an error saying %q", w, err, tc.want)
			}
			openAndClose(t, sink, tc.want)
		})
	}
}

// TestCreateCommitterErrorIsUntypedNil: the committer's constructor has the
// same shape as the writers'.
func TestCreateCommitterErrorIsUntypedNil(t *testing.T) {
	sink, err := NewSink[string](Brokers("127.0.0.1:notaport"), Topic("unused"), Guarantee(delivery.ExactlyOnce),
		TransactionalIDPrefix("create-err"))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := sink.CreateCommitter(writerContext())
	if cm != nil || err == nil || !strings.Contains(err.Error(), badServers) {
		t.Errorf("CreateCommitter = %#v, %v; want a nil committer and the bad address", cm, err)
	}
}

// TestFailedAbortOfLingeringTransactions: a start whose abort of a lingering
// transaction fails reports that failure. The broker refuses the abort
// (InitProducerId) because the transaction timeout is below a millisecond:
// INVALID_TRANSACTION_TIMEOUT. With the checkpoint interval unknown the
// timeout passes the writer's own check, so the abort is what fails.
func TestFailedAbortOfLingeringTransactions(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	topic := c.topic("out", 1)
	prefix := topic
	id := transactionalID(prefix, 0, 0)
	open := c.openTransaction(id, topic)
	sink, err := NewSink[string](Brokers(c.brokers), Topic(topic), Guarantee(delivery.ExactlyOnce),
		TransactionalIDPrefix(prefix), TransactionTimeout(500*time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	want := "aborting lingering transaction " + id
	w, err := sink.CreateWriter(writerContext())
	if w != nil || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("CreateWriter = %#v, %v; want a nil writer and an error saying %q", w, err, want)
	}
	openAndClose(t, sink, want)
	if err := open.EndTransaction(context.Background(), kgo.TryAbort); err != nil {
		t.Errorf("aborting the test's transaction: %v", err)
	}
}

func writerContext() operator.WriterContext {
	return operator.WriterContext{Subtask: event.SubtaskID{Vertex: "sink"}, Parallelism: 1, Context: context.Background()}
}

// openAndClose opens sink in a SinkOperator, as a subtask does, and closes
// it: Open must fail with an error saying want, Close must not panic.
func openAndClose(t *testing.T, sink operator.Sink, want string) {
	t.Helper()
	op := operator.NewSinkOperator(sink)
	ctx := &operator.Context{Subtask: event.SubtaskID{Vertex: "sink"}, Parallelism: 1, Context: context.Background(),
		Name: "Sink: out", Commit: operator.CommitAtEndOfInput}
	err := op.Open(ctx)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Open: %v; want an error saying %q", err, want)
	}
	if err := op.Close(); err != nil {
		t.Errorf("Close after a failed Open: %v", err)
	}
}
