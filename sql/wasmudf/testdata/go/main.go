// Weir SQL functions in Go, built by the standard Go toolchain for
// WebAssembly as a WASI reactor (see docs/udf.md and ../build.sh):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o go.wasm .
//
//	CREATE FUNCTION plus  AS 'add' LANGUAGE WASM USING JAR 'go.wasm';
//	CREATE FUNCTION shout AS 'shout(STRING) RETURNS STRING' LANGUAGE WASM USING JAR 'go.wasm';
//	CREATE FUNCTION words AS 'words(STRING) RETURNS ARRAY<STRING>' LANGUAGE WASM USING JAR 'go.wasm';
//	SELECT id, w FROM t, LATERAL TABLE(words(s)) AS x(w);
//
// spin loops forever and hog allocates without bound: the tests' proof
// that Weir stops both.
package main

import (
	"encoding/binary"
	"strings"
	"unsafe"
)

// live keeps the buffers handed to Weir reachable, so that Go's garbage
// collector does not reuse them before Weir calls weir_free.
var live = map[unsafe.Pointer][]byte{}

// weirAlloc gives Weir n bytes to write a STRING argument into.
//
//go:wasmexport weir_alloc
func weirAlloc(n uint32) unsafe.Pointer {
	return unsafe.Pointer(unsafe.SliceData(keep(int(n))))
}

// weirFree takes back an argument's buffer or a returned one.
//
//go:wasmexport weir_free
func weirFree(p unsafe.Pointer, n uint32) {
	delete(live, p)
}

// keep returns n bytes that stay reachable until weir_free. Their array
// has room for one byte more, so that even an empty buffer has its own
// address.
func keep(n int) []byte {
	b := make([]byte, n, n+1)
	live[unsafe.Pointer(unsafe.SliceData(b))] = b
	return b
}

// ret hands a STRING (or an ARRAY's encoding) to Weir as pointer<<32 |
// length.
func ret(s string) uint64 {
	b := keep(len(s))
	copy(b, s)
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))<<32 | uint64(len(s))
}

//go:wasmexport add
func add(a, b int64) int64 { return a + b }

//go:wasmexport shout
func shout(p unsafe.Pointer, n uint32) uint64 {
	return ret(strings.ToUpper(unsafe.String((*byte)(p), n)) + "!")
}

// words is a table function: its ARRAY<STRING> result, each element a
// little-endian uint32 length and its bytes, gives one row per word.
//
//go:wasmexport words
func words(p unsafe.Pointer, n uint32) uint64 {
	var out []byte
	for _, w := range strings.Fields(unsafe.String((*byte)(p), n)) {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(w)))
		out = append(out, w...)
	}
	return ret(string(out))
}

//go:wasmexport spin
func spin(x int64) int64 {
	for {
		x++
	}
}

var kept [][]byte

//go:wasmexport hog
func hog(x int64) int64 {
	for {
		kept = append(kept, make([]byte, 1<<20))
	}
}

func main() {}
