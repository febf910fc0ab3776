package heap

import "github.com/weirstream/weir/state/internal/keyed"

// ttl is a state's time-to-live.
type ttl = keyed.TTL

// elem is one stored value with the time it was last refreshed and the
// backend version in which v was stored or copied: when it is older than
// the backend's, a snapshot in flight may be encoding v (see private).
// Without a TTL ts is 0, except in a map's user-key elements, where it
// is the position plus one of the user key's change in its record when
// the element was written (ukRecord.set's at; 0: none).
type elem struct {
	v   any
	ts  int64
	ver uint64
}
