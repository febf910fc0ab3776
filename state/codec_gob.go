package state

import (
	"bytes"
	"encoding/gob"
	"fmt"

	"github.com/weirstream/weir/state/internal/wire"
)

// GobCodec encodes any gob-encodable T (encoding/gob) behind a uvarint
// length. It is the fallback of CodecFor: correct for structs, slices and
// maps, but slower and larger than a hand-written codec, because every value
// carries its gob type description. Interface-typed fields need gob.Register.
// Encode panics if gob cannot encode v (an unsupported type, such as a
// channel or func); backends turn that panic into an error of Snapshot.Write.
type GobCodec[T any] struct{}

// gobBox wraps the value so that gob accepts zero values and nil interfaces
// at the top level.
type gobBox[T any] struct{ V T }

// Encode appends the gob encoding of v.
func (GobCodec[T]) Encode(buf []byte, v T) []byte {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(gobBox[T]{v}); err != nil {
		panic(fmt.Sprintf("state: GobCodec cannot encode %T: %v", v, err))
	}
	return wire.AppendBytes(buf, b.Bytes())
}

// Decode decodes one gob-encoded value.
func (GobCodec[T]) Decode(b []byte) (v T, rest []byte, err error) {
	r := wire.NewReader(b)
	p := r.Bytes()
	if r.Err() != nil {
		return v, b, corruptf("gob: %v", r.Err())
	}
	var box gobBox[T]
	if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&box); err != nil {
		return v, b, corruptf("gob %T: %v", v, err)
	}
	return box.V, r.Rest(), nil
}
