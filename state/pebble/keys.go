package pebble

import (
	"github.com/weirstream/weir/state/internal/wire"
)

// Key layout (see the package doc): every Pebble key starts with its key
// group (2 bytes, big-endian) and its state's id (2 bytes, big-endian), so
// that one key group is one contiguous range, and one state within it too.
// Then comes the stream key's encoding behind its uvarint length, which
// makes it self-delimiting: no key's prefix is another key's prefix. A
// MapState entry appends the user key's encoding.

const groupStateLen = 4

func appendGroupState(buf []byte, kg int, sid uint16) []byte {
	return append(buf, byte(kg>>8), byte(kg), byte(sid>>8), byte(sid))
}

// appendKeyPrefix appends the prefix of every entry of key (encoded as
// keyBytes) in state sid and group kg.
func appendKeyPrefix(buf []byte, kg int, sid uint16, keyBytes []byte) []byte {
	return wire.AppendBytes(appendGroupState(buf, kg, sid), keyBytes)
}

// splitKey parses a Pebble key into its key group, its stream key's
// encoding, its prefix up to that key, and the rest (a map's user key).
func splitKey(k []byte) (kg int, keyBytes, prefix, rest []byte, ok bool) {
	if len(k) < groupStateLen {
		return 0, nil, nil, nil, false
	}
	kg = int(k[0])<<8 | int(k[1])
	r := wire.NewReader(k[groupStateLen:])
	keyBytes = r.Bytes()
	if r.Err() != nil {
		return 0, nil, nil, nil, false
	}
	rest = r.Rest()
	return kg, keyBytes, k[:len(k)-len(rest)], rest, true
}

// succ returns the smallest key greater than every key with prefix p, or
// nil when there is none (p is all 0xff).
func succ(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			s := append([]byte(nil), p[:i+1]...)
			s[i]++
			return s
		}
	}
	return nil
}
