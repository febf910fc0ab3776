package kafka

import "testing"

// A bad record's error tells how to continue past it: the Go options by
// default, the caller's advice when it gave one (BadRecordFix).
func TestRecordErrorFix(t *testing.T) {
	e := &RecordError{Topic: "t", Partition: 1, Offset: 7, Err: errString("not json")}
	const goFix = "kafka source: bad record at topic t partition 1 offset 7: not json " +
		"(to continue past such records use kafka.BadRecords(kafka.SkipBadRecords()) or kafka.DeadLetter)"
	if e.Error() != goFix {
		t.Fatalf("got %s\nwant %s", e.Error(), goFix)
	}
	e.Fix = "set 'scan.bad-record.policy' = 'skip'"
	const sqlFix = "kafka source: bad record at topic t partition 1 offset 7: not json " +
		"(to continue past such records set 'scan.bad-record.policy' = 'skip')"
	if e.Error() != sqlFix {
		t.Fatalf("got %s\nwant %s", e.Error(), sqlFix)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
