package jdbc

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/weirstream/weir/event"
)

// xid names one XA branch (PostgreSQL: one prepared transaction):
//
//	weir:<job>:<sink>:<subtask>:<seq>:r<run>
//
// seq is the first checkpoint the transaction can belong to: the last
// barrier the writer saw before the transaction's first row, plus one. The
// transaction is prepared at the first barrier at or after seq, so on a
// restore of checkpoint R it belongs to a checkpoint after R exactly when
// seq > R (a row written before barrier R would have been prepared at R).
// Within one writer, seq strictly increases: the next transaction starts
// after the barrier that prepared this one.
//
// run is random, drawn by each writer when it starts (every attempt, every
// process), so two attempts never name a transaction alike. Without it,
// seq repeats across attempts: killed right after checkpoint N-1 while its
// transaction seq N is open, a job restored from N-1 starts seq N again —
// and while the server has not yet dropped the dead session, the old
// branch still holds the name and XA START fails with XAER_DUPID (MySQL
// 1440). Recovery needs no run: it finds a sink's branches by prefix and
// subtask and decides by seq. An xid without a run (an older Weir's)
// still parses, so its branches are recovered too.
//
// MySQL allows 64 bytes of gtrid; the subtask, seq and run take at most 34,
// so a "weir:<job>:<sink>" prefix longer than 30 bytes, or one with
// characters outside [A-Za-z0-9_.-], is replaced by "weir:h" and a hash of
// job and sink.
//
// A write-ahead-log batch of an XA writer (see xaWriter) is named like an
// xid with "w" before the seq, which is then the checkpoint id, and no run:
// the name must be the same when a restore replays the batch, since the XA
// log row it inserts is how a replay is told from a first apply. It is only
// ever a row of the XA log, never a database transaction.
type xid struct {
	prefix  string
	subtask int
	seq     event.CheckpointID
	run     string // runLen base-36 digits; "" for a write-ahead-log batch
	wal     bool
}

const (
	runLen    = 6
	maxPrefix = 64 - 26 - len(":r") - runLen
)

// newRun draws a writer's run component: 6 base-36 digits, about 31 bits.
func newRun() string {
	var b [8]byte
	_, _ = rand.Read(b[:])                          // crypto/rand.Read never fails (Go 1.24)
	n := binary.BigEndian.Uint64(b[:]) % 2176782336 // 36^6
	r := strconv.FormatUint(n, 36)
	return strings.Repeat("0", runLen-len(r)) + r
}

var plainName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// XIDPrefix is what the name of every XA branch (PostgreSQL: prepared
// transaction) of the sink named sink in job starts with, followed by ":".
// job is the job id the sink's writers see (pipeline.name for a SQL job),
// sink is sink.name (the table name unless set). Tools that look for
// transactions a job left behind on a shared server use it to tell the
// job's own from other jobs'.
func XIDPrefix(job, sink string) string { return xidPrefix(job, sink) }

// xidPrefix is the prefix every xid of (job, sink) starts with.
func xidPrefix(job, sink string) string {
	p := "weir:" + job + ":" + sink
	if len(p) <= maxPrefix && plainName.MatchString(job) && plainName.MatchString(sink) {
		return p
	}
	h := sha256.Sum256([]byte(job + "\x00" + sink))
	return "weir:h" + hex.EncodeToString(h[:12])
}

func (x xid) String() string {
	if x.wal {
		return fmt.Sprintf("%s:%d:w%d", x.prefix, x.subtask, x.seq)
	}
	if x.run == "" {
		return fmt.Sprintf("%s:%d:%d", x.prefix, x.subtask, x.seq)
	}
	return fmt.Sprintf("%s:%d:%d:r%s", x.prefix, x.subtask, x.seq, x.run)
}

// parseXid reads an xid written by String (with or without a run); ok is
// false for foreign ids.
func parseXid(s string) (x xid, ok bool) {
	if !strings.HasPrefix(s, "weir:") {
		return x, false
	}
	if k := strings.LastIndexByte(s, ':'); k >= 0 && isRun(s[k+1:]) {
		x, ok = parseSeq(s[:k])
		x.run = s[k+2:]
		return x, ok && !x.wal
	}
	return parseSeq(s)
}

// parseSeq reads weir:<prefix>:<subtask>:<seq> (seq "w<n>" for a
// write-ahead-log batch).
func parseSeq(s string) (x xid, ok bool) {
	j := strings.LastIndexByte(s, ':')
	i := strings.LastIndexByte(s[:max(j, 0)], ':')
	if i <= len("weir") {
		return x, false
	}
	seqText, wal := strings.CutPrefix(s[j+1:], "w")
	sub, err1 := strconv.Atoi(s[i+1 : j])
	seq, err2 := strconv.ParseInt(seqText, 10, 64)
	if err1 != nil || err2 != nil || sub < 0 || seq < 0 {
		return x, false
	}
	return xid{prefix: s[:i], subtask: sub, seq: event.CheckpointID(seq), wal: wal}, true
}

// isRun tells an xid's last field "r<run>" from a seq.
func isRun(f string) bool {
	if len(f) != 1+runLen || f[0] != 'r' {
		return false
	}
	for _, c := range f[1:] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}
