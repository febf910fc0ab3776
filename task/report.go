package task

import (
	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/event"
)

// ReportKind tells what a Report says.
type ReportKind int

const (
	// ReportAck: the subtask's snapshot of checkpoint ID is written; Ack
	// carries its state handles (Flink's AcknowledgeCheckpoint).
	ReportAck ReportKind = iota
	// ReportDecline: the subtask cannot take checkpoint ID; Err says why
	// (Flink's DeclineCheckpoint). The checkpoint fails.
	ReportDecline
	// ReportProgress: checkpoint ID reached Phase in the subtask (barrier
	// received, aligned, sync done, …), with Detail; the checkpoint
	// timeline and the "slowest subtask" messages read these.
	ReportProgress
	// ReportSourceFinished: a source subtask read all its input.
	ReportSourceFinished
)

// Report is what a subtask tells the job's driver.
type Report struct {
	Kind   ReportKind
	Task   event.SubtaskID
	ID     event.CheckpointID
	Ack    checkpoint.Ack
	Phase  checkpoint.Phase
	Detail string
	Err    error
}

// MailKind tells what a Mail asks.
type MailKind int

const (
	// MailTrigger asks a source subtask to take checkpoint Barrier.ID.
	MailTrigger MailKind = iota
	// MailComplete tells the subtask checkpoint ID completed: sinks commit
	// what they prepared for it (Flink's notifyCheckpointComplete).
	MailComplete
	// MailAborted tells the subtask checkpoint ID was aborted: it drops
	// what it holds for it (Flink's notifyCheckpointAborted).
	MailAborted
	// MailDrain asks a source subtask to end its input now, as a bounded
	// source does at its end (max watermark, end of input): the first
	// step of a stop-with-savepoint with drain, whose savepoint is then
	// the job's final checkpoint.
	MailDrain
)

// Mail is a request posted into a subtask's mailbox.
type Mail struct {
	Kind    MailKind
	ID      event.CheckpointID
	Barrier event.CheckpointBarrier
}
