package operator

// CachedNow serves an operator's processing time (Context.Now) on the
// hot path: operators that consult it for every row (a mini-batch's
// allow-latency, processing-time windows, state TTL) share one reading
// of the clock across up to CachedNowReads calls, and the subtask drops
// the reading whenever it takes up new work (an input batch, a source
// poll or periodic watermark, a timer tick before its callbacks, a mail,
// a checkpoint), so no reading outlives the batch it was taken in. Reading the wall clock costs about 50 ns on a virtual
// machine, a few per cent of a query that reads it once or twice a row.
//
// A CachedNow belongs to its subtask's goroutine, as the operators that
// call it do.
type CachedNow struct {
	read func() int64
	now  int64
	left int
}

// CachedNowReads is how many calls of Now one reading of the clock serves
// at most.
const CachedNowReads = 16

// NewCachedNow returns a CachedNow over read (ms since the epoch).
func NewCachedNow(read func() int64) *CachedNow { return &CachedNow{read: read} }

// Now is the processing time in ms since the epoch: the last reading, or a
// new one when it was dropped or has served CachedNowReads calls.
func (c *CachedNow) Now() int64 {
	if c.left <= 0 {
		c.now, c.left = c.read(), CachedNowReads
	}
	c.left--
	return c.now
}

// Drop makes the next Now read the clock.
func (c *CachedNow) Drop() { c.left = 0 }
