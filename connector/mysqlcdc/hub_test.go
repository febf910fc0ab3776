package mysqlcdc

import (
	"context"
	"log/slog"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
)

// hubEventAt is an event occupying [from, to) of binlog file f.
func hubEventAt(f string, from, to uint32) hubEvent {
	return hubEvent{file: f, ev: &replication.BinlogEvent{Header: &replication.EventHeader{LogPos: to, EventSize: to - from}}}
}

// received drains what s was handed, as the events' [start, end) offsets.
func received(s *subscription) [][2]uint32 {
	var out [][2]uint32
	for {
		select {
		case e := <-s.events:
			h := e.ev.Header
			out = append(out, [2]uint32{h.LogPos - h.EventSize, h.LogPos})
		default:
			return out
		}
	}
}

// A subscriber that joins behind the running connection gets nothing of
// it: it waits for the connection that goes back to its start, and then
// gets every event from there once, in order. (It used to take the
// running connection's next event, which marked everything before it
// delivered: the restart then skipped the events in between for it, and
// a parallel snapshot's handover to the binlog lost changes.)
func TestHubLateSubscriberGetsEveryEventFromItsStart(t *testing.T) {
	const f = "mysql-bin.000001"
	h := newHub(Options{}, slog.Default())
	restarts := 0
	h.mu.running, h.mu.pos, h.mu.restart = true, BinlogPos{File: f, Pos: 100}, func() { restarts++ }
	ctx := context.Background()
	ahead := h.subscribe(ctx, BinlogPos{File: f, Pos: 100}, "", 1, "mariadb")
	late := h.subscribe(ctx, BinlogPos{File: f, Pos: 50}, "", 2, "mariadb")
	if restarts != 1 {
		t.Fatalf("%d restarts after a subscriber joined behind the connection, want 1", restarts)
	}
	deliver := func(from, to uint32) {
		t.Helper()
		if err := h.deliver(ctx, hubEventAt(f, from, to)); err != nil {
			t.Fatal(err)
		}
	}
	deliver(100, 150) // the old connection's next event, before it stops
	if got := received(late); len(got) != 0 {
		t.Fatalf("the late subscriber got %v from the connection that had read past its start", got)
	}
	h.mu.Lock()
	from, _, _ := h.connectLocked(func() {})
	h.mu.Unlock()
	if want := (BinlogPos{File: f, Pos: 50}); from != want {
		t.Fatalf("the new connection starts at %s, want %s", from, want)
	}
	for _, e := range [][2]uint32{{50, 100}, {100, 150}, {150, 200}} {
		deliver(e[0], e[1])
	}
	want := map[*subscription][][2]uint32{
		ahead: {{100, 150}, {150, 200}}, // 100–150 from the old connection
		late:  {{50, 100}, {100, 150}, {150, 200}},
	}
	for s, w := range want {
		got := received(s)
		if len(got) != len(w) {
			t.Fatalf("subscriber from %s got %v, want %v", s.from, got, w)
		}
		for i := range w {
			if got[i] != w[i] {
				t.Fatalf("subscriber from %s got %v, want %v", s.from, got, w)
			}
		}
	}
}
