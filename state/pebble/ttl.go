package pebble

import (
	"github.com/weirstream/weir/state/internal/keyed"
	"github.com/weirstream/weir/state/internal/wire"
)

// ttl is a state's time-to-live.
type ttl = keyed.TTL

// splitTS splits a stored value into its timestamp, when entries of the
// state carry one, and its payload.
func splitTS(v []byte, hasTS bool) (int64, []byte, bool) {
	if !hasTS {
		return 0, v, true
	}
	r := wire.NewReader(v)
	ts := r.Varint()
	return ts, r.Rest(), r.Err() == nil
}

// item is one list element as stored: its timestamp (when the state has a
// TTL) and its encoding.
type item struct {
	ts  int64
	enc []byte
}

// appendItem appends one list element in the stored form, which is also
// the element's form in the snapshot blob: [ts varint] element(len+bytes).
func appendItem(buf []byte, hasTS bool, ts int64, enc []byte) []byte {
	if hasTS {
		buf = wire.AppendVarint(buf, ts)
	}
	return wire.AppendBytes(buf, enc)
}

// parseItems parses a stored list: its elements concatenated, each as
// appendItem writes it (Pebble's concatenating merge operator appends them).
func parseItems(v []byte, hasTS bool) ([]item, bool) {
	r := wire.NewReader(v)
	var items []item
	for r.Len() > 0 && r.Err() == nil {
		var ts int64
		if hasTS {
			ts = r.Varint()
		}
		items = append(items, item{ts, r.Bytes()})
	}
	return items, r.Err() == nil
}
