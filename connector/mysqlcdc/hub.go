package mysqlcdc

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/go-mysql-org/go-mysql/replication"
)

// hub reads the binlog once for all the readers of a Source in this
// process and hands every reader the events from its own start position
// on. Flink CDC reads the binlog phase in one reader (its enumerator hands
// a single binlog split to one subtask once every snapshot split is
// done); Weir's splits keep their positions in the subtask that owns them,
// so instead of moving the splits the subtasks share one binlog
// connection: one dump thread on the server and every event parsed once,
// where each subtask had its own and parsed the whole binlog.
//
// A reader that joins after the hub has read past its start restarts the
// hub there; the readers that are ahead skip the events they already had
// (positions order totally: file, then offset), so each reader sees the
// binlog from its start once, in order, whatever the order they join in.
type hub struct {
	o   Options
	log *slog.Logger

	mu struct {
		sync.Mutex
		subs    map[*subscription]bool
		running bool
		pos     BinlogPos          // where the connection is: its start, then the end of each event read
		restart context.CancelFunc // stops the current connection (a restart, or nobody left)
		from    BinlogPos          // a late subscriber's start the next connection must go back to (zero: none)
	}
}

// hubEvent is one binlog event with the file it lies in, or the error
// that ended the stream. At a transaction's end (XID, COMMIT, DDL) gtids
// is MariaDB's GTID position after it ("": unknown).
type hubEvent struct {
	ev    *replication.BinlogEvent
	file  string
	gtids string
	err   error
}

// subscription is one reader's place in the hub's stream.
type subscription struct {
	from      BinlogPos // the reader's start: events before it are not its
	fromGTIDs string    // the GTID position at from, when known
	delivered BinlogPos // end of the last event handed on (zero: none)
	// attached: the current connection has not read past where s needs
	// the stream, so it hands s every event from there on. A subscriber
	// that joins behind the connection waits for the restart at its
	// start: taking the connection's next event would mark everything
	// before it delivered, and s would never get the events in between.
	attached bool
	serverID uint32
	flavor   string
	events   chan hubEvent
	done     <-chan struct{}
}

func newHub(o Options, log *slog.Logger) *hub {
	h := &hub{o: o, log: log}
	h.mu.subs = map[*subscription]bool{}
	return h
}

// subscribe joins the stream at from; the events come on the returned
// subscription's channel until ctx ends (then call leave).
func (h *hub) subscribe(ctx context.Context, from BinlogPos, gtids string, serverID uint32, flavor string) *subscription {
	s := &subscription{from: from, fromGTIDs: gtids, serverID: serverID, flavor: flavor, events: make(chan hubEvent, 64), done: ctx.Done()}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mu.subs[s] = true
	switch {
	case !h.mu.running:
		h.mu.running = true
		go h.run() // attaches s when it connects
	case h.mu.pos.IsZero():
		// run is about to connect, and attaches s then.
	case from.Compare(h.mu.pos) >= 0:
		s.attached = true
	default:
		// Behind the stream: the next connection goes back to from.
		if h.mu.from.IsZero() || from.Compare(h.mu.from) < 0 {
			h.mu.from = from
		}
		if h.mu.restart != nil {
			h.mu.restart()
		}
	}
	return s
}

// need is where s's stream goes on: its start, or the end of the last
// event it had.
func (s *subscription) need() BinlogPos {
	if s.delivered.Compare(s.from) > 0 {
		return s.delivered
	}
	return s.from
}

// needLocked is where the next connection must start: the earliest place
// a subscriber still needs.
func (h *hub) needLocked() BinlogPos {
	var m BinlogPos
	for s := range h.mu.subs {
		if need := s.need(); m.IsZero() || need.Compare(m) < 0 {
			m = need
		}
	}
	return m
}

// gtidsAtLocked is the GTID position a subscriber that has had nothing
// yet knows for from ("": none knows it; start by file and offset).
func (h *hub) gtidsAtLocked(from BinlogPos) string {
	for s := range h.mu.subs {
		if s.fromGTIDs != "" && s.delivered.IsZero() && s.from == from {
			return s.fromGTIDs
		}
	}
	return ""
}

// leave ends s's subscription; the last one out stops the connection.
func (h *hub) leave(s *subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.mu.subs, s)
	if len(h.mu.subs) == 0 && h.mu.restart != nil {
		h.mu.restart()
	}
}

// run reads the binlog, reconnecting where a late subscriber needs it,
// until no subscriber is left or the stream fails (every subscriber gets
// the error).
func (h *hub) run() {
	for {
		ctx, cancel := context.WithCancel(context.Background())
		h.mu.Lock()
		if len(h.mu.subs) == 0 {
			h.mu.running, h.mu.pos, h.mu.from, h.mu.restart = false, BinlogPos{}, BinlogPos{}, nil
			h.mu.Unlock()
			cancel()
			return
		}
		from, gtids, any := h.connectLocked(cancel)
		h.mu.Unlock()
		err := h.read(ctx, from, gtids, any.serverID, any.flavor)
		stopped := ctx.Err() != nil // a restart or nobody left, not a failure
		cancel()
		if err != nil && !stopped {
			h.fail(err)
		}
	}
}

// connectLocked starts a connection (stopped by cancel): at the earliest
// place a subscriber needs, with every subscriber attached. It returns
// where, the GTID position there when known, and a subscriber whose
// server id and flavor it uses.
func (h *hub) connectLocked(cancel context.CancelFunc) (BinlogPos, string, *subscription) {
	from := h.needLocked()
	if !h.mu.from.IsZero() && h.mu.from.Compare(from) < 0 {
		from = h.mu.from
	}
	h.mu.from, h.mu.pos, h.mu.restart = BinlogPos{}, from, cancel
	var any *subscription
	for s := range h.mu.subs {
		s.attached, any = from.Compare(s.need()) <= 0, s
	}
	return from, h.gtidsAtLocked(from), any
}

// fail hands err to every subscriber and drops them.
func (h *hub) fail(err error) {
	h.mu.Lock()
	subs := h.mu.subs
	h.mu.subs = map[*subscription]bool{}
	h.mu.Unlock()
	for s := range subs {
		select {
		case s.events <- hubEvent{err: err}:
		case <-s.done:
		}
	}
}

// read is one connection: from from (by GTID when gtids is set) until
// ctx ends or the stream fails.
func (h *hub) read(ctx context.Context, from BinlogPos, gtids string, serverID uint32, flavor string) error {
	o := h.o
	syncer := replication.NewBinlogSyncer(o.syncerConfig(serverID, flavor, h.log))
	defer syncer.Close()
	st, g, err := h.start(ctx, syncer, from, gtids, flavor)
	if err != nil {
		return fmt.Errorf("mysql-cdc table %q: start reading the binlog at %s as replica %d (check 'server-id' is unique, "+
			"and 'username' has REPLICATION SLAVE): %w", o.Name, from, serverID, err)
	}
	h.log.Info("mysql-cdc: streaming the binlog", "table", o.Database+"."+o.Table, "from", from.String(),
		"gtid_pos", gtids, "server_id", serverID)
	file := from.File
	for {
		ev, err := st.GetEvent(ctx)
		if err != nil {
			return fmt.Errorf("mysql-cdc table %q: binlog in %s: %w", o.Name, file, err)
		}
		if r, ok := ev.Event.(*replication.RotateEvent); ok {
			file = string(r.NextLogName) // fake (LogPos 0) at the start, real at a file's end
			continue
		}
		switch ev.Header.EventType {
		case replication.HEARTBEAT_EVENT, replication.HEARTBEAT_LOG_EVENT_V2:
			continue // the server's "still here": no place in the binlog
		}
		if ev.Header.LogPos == 0 {
			continue // artificial: no place in the binlog
		}
		if err := h.deliver(ctx, hubEvent{ev: ev, file: file, gtids: g.after(ev)}); err != nil {
			return nil
		}
	}
}

// deliver hands e to every attached subscriber whose start it is at or
// past and that did not have it already. Only the hub's goroutine writes
// delivered, after the subscriber took the event: a restart computes its
// start from what was really handed on.
func (h *hub) deliver(ctx context.Context, e hubEvent) error {
	end := BinlogPos{File: e.file, Pos: e.ev.Header.LogPos}
	start := BinlogPos{File: e.file, Pos: e.ev.Header.LogPos - e.ev.Header.EventSize}
	h.mu.Lock()
	h.mu.pos = end
	var to []*subscription
	for s := range h.mu.subs {
		if start.Compare(s.from) >= 0 && end.Compare(s.delivered) > 0 && s.attached {
			to = append(to, s)
		}
	}
	h.mu.Unlock()
	for _, s := range to {
		select {
		case s.events <- e:
			h.mu.Lock()
			s.delivered = end
			h.mu.Unlock()
		case <-s.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
