package checkpointstorage

import (
	"encoding/binary"
	"hash/crc32"
)

// A frame wraps a payload so that truncation and corruption are detected:
//
//	magic   8 bytes, names the file kind
//	version uint32, big-endian (frameVersion)
//	length  uint64, big-endian: payload length in bytes
//	crc32c  uint32, big-endian: CRC32C (Castagnoli) of the payload
//	payload length bytes
const (
	frameVersion    = 1
	frameHeaderSize = 8 + 4 + 8 + 4
)

var (
	metadataMagic = [8]byte{'W', 'E', 'I', 'R', 'M', 'E', 'T', 'A'}
	counterMagic  = [8]byte{'W', 'E', 'I', 'R', 'N', 'X', 'I', 'D'}
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

func encodeFrame(magic [8]byte, payload []byte) []byte {
	b := make([]byte, 0, frameHeaderSize+len(payload))
	b = append(b, magic[:]...)
	b = binary.BigEndian.AppendUint32(b, frameVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(len(payload)))
	b = binary.BigEndian.AppendUint32(b, checksum(payload))
	return append(b, payload...)
}

// decodeFrame returns the payload of a frame, or a *CorruptError naming path.
func decodeFrame(path string, magic [8]byte, b []byte) ([]byte, error) {
	if len(b) < frameHeaderSize {
		return nil, corrupt(path, "truncated: %d bytes, shorter than the %d-byte header", len(b), frameHeaderSize)
	}
	if [8]byte(b[:8]) != magic {
		return nil, corrupt(path, "bad magic %q, want %q", b[:8], magic[:])
	}
	if v := binary.BigEndian.Uint32(b[8:]); v != frameVersion {
		return nil, corrupt(path, "unsupported format version %d, want %d", v, frameVersion)
	}
	n := binary.BigEndian.Uint64(b[12:])
	payload := b[frameHeaderSize:]
	if n != uint64(len(payload)) {
		return nil, corrupt(path, "truncated or padded: header says %d payload bytes, file has %d", n, len(payload))
	}
	if got, want := checksum(payload), binary.BigEndian.Uint32(b[20:]); got != want {
		return nil, corrupt(path, "checksum %#08x, want %#08x", got, want)
	}
	return payload, nil
}
