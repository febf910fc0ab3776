package jdbc

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/weirstream/weir/event"
)

// xid names one XA branch (PostgreSQL: one prepared transaction):
//
//	weir:<job>:<sink>:<subtask>:<seq>
//
// seq is the first checkpoint the transaction can belong to: the last
// barrier the writer saw before the transaction's first row, plus one. The
// transaction is prepared at the first barrier at or after seq, so on a
// restore of checkpoint R it belongs to a checkpoint after R exactly when
// seq > R (a row written before barrier R would have been prepared at R).
// Within one writer, seq strictly increases: the next transaction starts
// after the barrier that prepared this one.
//
// MySQL allows 64 bytes of gtrid; the subtask and seq take at most 26, so a
// "weir:<job>:<sink>" prefix longer than 38 bytes, or one with characters
// outside [A-Za-z0-9_.-], is replaced by "weir:h" and a hash of job and sink.
//
// A write-ahead-log batch of an XA writer (see xaWriter) is named like an
// xid with "w" before the seq, which is then the checkpoint id; it is only
// ever a row of the XA log, never a database transaction.
type xid struct {
	prefix  string
	subtask int
	seq     event.CheckpointID
	wal     bool
}

const maxPrefix = 64 - 26

var plainName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

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
	return fmt.Sprintf("%s:%d:%d", x.prefix, x.subtask, x.seq)
}

// parseXid reads an xid written by String; ok is false for foreign ids.
func parseXid(s string) (x xid, ok bool) {
	if !strings.HasPrefix(s, "weir:") {
		return x, false
	}
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
