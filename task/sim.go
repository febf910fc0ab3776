package task

// Under a simulation's scheduler (Spec.Clock a clock.Scheduler) the
// subtask's goroutine runs only while it holds the scheduler's baton. Each
// select of the mailbox loop, the credit waits and the report to the
// driver first waits on the scheduler until one of its channels is ready
// (clock.Choose) and then takes that case alone, so a seed decides the
// interleaving; the asynchronous snapshot writers are goroutines of the
// scheduler too. Without a scheduler none of this runs.

// yield lets the scheduler run another goroutine before the next step of
// the mailbox loop: a preemption point between batches, where the
// goroutines of a simulated job interleave.
func (t *Subtask) yield() {
	if t.sched != nil {
		t.sched.Wait(always)
	}
}

func always() bool { return true }
