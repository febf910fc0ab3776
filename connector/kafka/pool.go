package kafka

import (
	"fmt"
	"sort"
	"sync"

	"github.com/weirstream/weir/event"
)

// slotState is where one transactional id of the pool is in its cycle:
// free → open (a transaction takes records) → pre-committed (flushed at a
// barrier, its committable in the checkpoint) → quarantined (committed) →
// free again once a checkpoint taken after the commit has completed.
//
// The quarantine is what makes a restored committable unambiguous: while a
// completed checkpoint may still hold a committable of an id, the id is
// neither reused nor fenced, so EndTxn with the stored producer id and
// epoch meets either that very transaction (ongoing, committed or aborted
// by the broker) and never a later one.
type slotState uint8

const (
	slotFree slotState = iota
	slotOpen
	slotPrecommitted
	slotQuarantined
)

type poolSlot struct {
	id    string
	state slotState
	// until: a quarantined slot is freed by a commit of a checkpoint after
	// until (the last barrier the writer had seen when the commit ran).
	until event.CheckpointID
}

// txnPool is the bookkeeping of one sink subtask's transactional ids,
// shared by its writer and its committer. It does no I/O. Both call it from
// the subtask goroutine today; the mutex keeps it correct should the
// committer ever run elsewhere.
type txnPool struct {
	mu struct {
		sync.Mutex
		slots []poolSlot
		byID  map[string]int
		next  int // round-robin cursor over slots
		// pending holds every pre-committed, uncommitted transactional id,
		// own or inherited from another subtask on restore: the writer's
		// state, so a restore knows which ids not to abort.
		pending      map[string]event.CheckpointID
		lastPrepared event.CheckpointID
	}
}

// transactionalID is "<prefix>-<subtask>-<slot>".
func transactionalID(prefix string, subtask, slot int) string {
	return fmt.Sprintf("%s-%d-%d", prefix, subtask, slot)
}

func newTxnPool(prefix string, subtask, size int, restored event.CheckpointID) *txnPool {
	p := &txnPool{}
	p.mu.byID = map[string]int{}
	p.mu.pending = map[string]event.CheckpointID{}
	p.mu.lastPrepared = restored
	for i := 0; i < size; i++ {
		id := transactionalID(prefix, subtask, i)
		p.mu.byID[id] = i
		p.mu.slots = append(p.mu.slots, poolSlot{id: id})
	}
	return p
}

// protect marks a restored pre-committed id: the committer is about to
// commit it, nobody may abort or reuse it.
func (p *txnPool) protect(id string, ckpt event.CheckpointID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.pending[id] = ckpt
	if i, ok := p.mu.byID[id]; ok {
		p.mu.slots[i].state = slotPrecommitted
	}
}

// protected reports whether id is pre-committed and uncommitted.
func (p *txnPool) protected(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.mu.pending[id]
	return ok
}

// acquire takes a free id for a new transaction.
func (p *txnPool) acquire() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.mu.slots)
	for k := 0; k < n; k++ {
		i := (p.mu.next + k) % n
		if p.mu.slots[i].state == slotFree {
			p.mu.slots[i].state = slotOpen
			p.mu.next = i + 1
			return p.mu.slots[i].id, nil
		}
	}
	return "", fmt.Errorf("%w: all %d ids are in use (%s); raise kafka.TransactionalIDPoolSize or let fewer checkpoints fail in a row",
		ErrPoolExhausted, n, p.describeLocked())
}

func (p *txnPool) describeLocked() string {
	var open, pre, quar int
	for _, s := range p.mu.slots {
		switch s.state {
		case slotOpen:
			open++
		case slotPrecommitted:
			pre++
		case slotQuarantined:
			quar++
		}
	}
	return fmt.Sprintf("%d open, %d pre-committed awaiting their checkpoint, %d committed awaiting a later checkpoint", open, pre, quar)
}

// barrier records that the writer pre-committed for checkpoint id.
func (p *txnPool) barrier(id event.CheckpointID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.lastPrepared = max(p.mu.lastPrepared, id)
}

// precommit moves the open id to pre-committed for checkpoint ckpt.
func (p *txnPool) precommit(id string, ckpt event.CheckpointID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.pending[id] = ckpt
	if i, ok := p.mu.byID[id]; ok {
		p.mu.slots[i].state = slotPrecommitted
	}
}

// pendingIDs returns the pre-committed, uncommitted ids, sorted.
func (p *txnPool) pendingIDs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.mu.pending))
	for id := range p.mu.pending {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// commitDue is called when the committables of checkpoint due are about to
// be committed, which means a checkpoint at or after due has completed:
// quarantined ids committed before that checkpoint's barrier are free.
func (p *txnPool) commitDue(due event.CheckpointID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.mu.slots {
		s := &p.mu.slots[i]
		if s.state == slotQuarantined && s.until < due {
			s.state = slotFree
		}
	}
}

// committed moves id from pre-committed to quarantined.
func (p *txnPool) committed(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.mu.pending, id)
	if i, ok := p.mu.byID[id]; ok {
		p.mu.slots[i].state = slotQuarantined
		p.mu.slots[i].until = p.mu.lastPrepared
	}
}

// states returns each slot's state, for tests.
func (p *txnPool) states() []slotState {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]slotState, len(p.mu.slots))
	for i, s := range p.mu.slots {
		out[i] = s.state
	}
	return out
}
