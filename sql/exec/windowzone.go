package exec

import "time"

// windowZone is the zone whose wall clock aligns the windows over a
// TIMESTAMP_LTZ time attribute (Flink's shiftTimeZone, the session's
// 'table.local-time-zone'): a row's instant is turned into that wall
// clock's milliseconds ("local" ms), windows are cut there (a day window
// starts at local midnight, and on a daylight-saving day lasts 23 or 25
// hours), window_start and window_end show it, and a window fires when
// the watermark passes the instant of its end (Flink's TimeWindowUtil).
// The zero windowZone is UTC: no shift.
type windowZone struct {
	loc *time.Location
	// dst: the zone observes daylight saving time (Java's
	// TimeZone.useDaylightTime), which changes how a window end in a
	// skipped or repeated hour becomes a timer.
	dst bool
}

const msPerHour = int64(time.Hour / time.Millisecond)

func newWindowZone(loc *time.Location) windowZone {
	if loc == nil || loc == time.UTC {
		return windowZone{}
	}
	y := time.Now().Year()
	_, jan := time.Date(y, time.January, 1, 0, 0, 0, 0, loc).Zone()
	_, jul := time.Date(y, time.July, 1, 0, 0, 0, 0, loc).Zone()
	return windowZone{loc: loc, dst: jan != jul}
}

// offset is the zone's UTC offset at instant ms, in ms.
func (z windowZone) offset(ms int64) int64 {
	_, off := time.UnixMilli(ms).In(z.loc).Zone()
	return int64(off) * 1000
}

// local is the wall clock of instant ms (toUtcTimestampMills).
func (z windowZone) local(ms int64) int64 {
	if z.loc == nil || ms == maxMillis {
		return ms
	}
	return ms + z.offset(ms)
}

// instant is the instant of wall clock local as Java's LocalDateTime.atZone
// gives it: in a repeated hour the earlier one, in a skipped hour the
// instant as far past the gap as local is past its start (toEpochMills).
func (z windowZone) instant(local int64) int64 {
	if z.loc == nil || local == maxMillis {
		return local
	}
	before, after := z.offset(local-24*msPerHour), z.offset(local+24*msPerHour)
	switch {
	case z.offset(local-before) == before:
		return local - before
	case z.offset(local-after) == after:
		return local - after
	}
	return local - before // in a gap
}

// timer is the instant at which a window ending at local end+1 fires
// (toEpochMillsForTimer of end): in a DST zone, a skipped hour's ends
// fire at the first instant after the gap, a repeated hour's at its
// second occurrence, so both hours' rows are in.
func (z windowZone) timer(end int64) int64 {
	t1 := z.instant(end)
	if !z.dst || end == maxMillis {
		return t1
	}
	t2 := z.instant(end + msPerHour)
	switch {
	case t1 == t2:
		return t1 - floorMod(t1, msPerHour)
	case t2-t1 > msPerHour:
		return t1 + msPerHour
	}
	return t1
}

const maxMillis = int64(^uint64(0) >> 1)
