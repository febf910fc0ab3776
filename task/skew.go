package task

import (
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/watermark"
)

// SkewFix is the advice logged when a source record's timestamp is too far
// past the wall clock to advance the watermark.
const SkewFix = "if the source's event time legitimately runs ahead of the wall clock, raise " +
	"'table.exec.source.max-future-skew' in SQL or the watermark strategy's MaxFutureSkew in the Go API; " +
	"'0' turns the guard off (and lets such a record move event time ahead, making on-time records late)"

// checkFutureSkew warns, once per split, when the future-skew guard keeps
// a record from moving the split's watermark: a timestamp so far past the
// wall clock is a producer's wrong clock or a corrupt field, which would
// otherwise make every on-time record after it late, to be dropped by
// windows without a word. It is called for each record the guard sees, at
// the record, so the warning does not depend on when watermarks are
// emitted; the guard itself counts the records (Metrics.FutureSkewed).
func (d *sourceDriver) checkFutureSkew(split string, ts event.Timestamp) {
	skew := d.spec.Watermarks.MaxFutureSkew
	if !watermark.TooFarAhead(ts, d.now, skew) || d.skewWarned[split] {
		return
	}
	if d.skewWarned == nil {
		d.skewWarned = map[string]bool{}
	}
	d.skewWarned[split] = true
	d.t.spec.Logger.Warn("a record's event time is too far past the wall clock: it does not move the watermark "+
		"(it would make the records after it late); the record itself flows on",
		"operator", d.spec.Name, "split", split,
		"timestamp", FormatEventTime(ts), "wall clock", FormatEventTime(d.now.UnixMilli()),
		"max-future-skew", skew, "fix", SkewFix)
}
