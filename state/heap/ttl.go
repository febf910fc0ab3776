package heap

import "github.com/weirstream/weir/state/internal/keyed"

// ttl is a state's time-to-live.
type ttl = keyed.TTL

// elem is one stored value with the time it was last refreshed (0 when the
// state has no TTL) and the backend version in which v was stored or
// copied: when it is older than the backend's, a snapshot in flight may be
// encoding v (see private).
type elem struct {
	v   any
	ts  int64
	ver uint64
}
