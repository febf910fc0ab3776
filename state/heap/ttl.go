package heap

import "github.com/weirstream/weir/state"

// ttl is a state's time-to-live, resolved from its state.TTLConfig.
type ttl struct {
	ms     int64 // 0: no TTL
	onRead bool  // reads refresh the timestamp too
}

func newTTL(c *state.TTLConfig) ttl {
	return ttl{ms: c.Millis(), onRead: c != nil && c.UpdateType == state.OnReadAndWrite}
}

func (t ttl) enabled() bool { return t.ms > 0 }

// expired reports whether an entry last refreshed at ts (ms) has expired at
// now: Flink's "lastAccess + ttl <= now".
func (t ttl) expired(ts, now int64) bool { return t.ms > 0 && now-ts >= t.ms }

// elem is one stored value with the time it was last refreshed (0 when the
// state has no TTL) and the backend version in which v was stored or
// copied: when it is older than the backend's, a snapshot in flight may be
// encoding v (see private).
type elem struct {
	v   any
	ts  int64
	ver uint64
}
