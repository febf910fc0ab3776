package task

import (
	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/event"
)

// ReportKind tells what a Report says.
type ReportKind int

const (
	ReportAck ReportKind = iota
	ReportDecline
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
	MailComplete
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
