package kafka

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/weirstream/weir/event"
)

// TestPool runs the scripts in testdata/pool against the transactional id
// pool. Commands:
//
//	new size=N [restored=R]   a pool of ids p-0-0 … p-0-(N-1)
//	acquire                   take a free id for a new transaction
//	barrier id=N              the writer pre-committed for checkpoint N
//	precommit id=X ckpt=N     the open id X is pre-committed for N
//	due id=N                  the committer starts committing checkpoint N
//	committed id=X            the committer committed X
//	protect id=X ckpt=N       X is a restored committable
//
// Every command but new and acquire prints the slots and the pending ids.
func TestPool(t *testing.T) {
	var p *txnPool
	datadriven.RunTest(t, "testdata/pool", func(t *testing.T, d *datadriven.TestData) string {
		ckpt := func(key string) event.CheckpointID {
			var n int
			d.ScanArgs(t, key, &n)
			return event.CheckpointID(n)
		}
		id := func() string {
			var s string
			d.ScanArgs(t, "id", &s)
			return s
		}
		switch d.Cmd {
		case "new":
			var size, restored int
			d.ScanArgs(t, "size", &size)
			if d.HasArg("restored") {
				d.ScanArgs(t, "restored", &restored)
			}
			p = newTxnPool("p", 0, size, event.CheckpointID(restored))
		case "acquire":
			got, err := p.acquire()
			if err != nil {
				return "error: " + err.Error()
			}
			return got
		case "barrier":
			p.barrier(ckpt("id"))
		case "precommit":
			p.precommit(id(), ckpt("ckpt"))
		case "due":
			p.commitDue(ckpt("id"))
		case "committed":
			p.committed(id())
		case "protect":
			p.protect(id(), ckpt("ckpt"))
		default:
			d.Fatalf(t, "unknown command %s", d.Cmd)
		}
		return describePool(p)
	})
}

func describePool(p *txnPool) string {
	names := []string{"free", "open", "precommitted", "quarantined"}
	var b strings.Builder
	for i, st := range p.states() {
		fmt.Fprintf(&b, "%s %s", p.mu.slots[i].id, names[st])
		if st == slotQuarantined {
			fmt.Fprintf(&b, " until=%d", p.mu.slots[i].until)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "pending %v\n", p.pendingIDs())
	return b.String()
}
