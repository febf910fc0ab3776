package wasmudf

// TestModule is testdata/udf.wat assembled by hand: the module the tests
// of this package and of sql/session load (add, spin, grow), so they need
// no WebAssembly toolchain.
func TestModule() []byte {
	section := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	m := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	m = append(m, section(1, 0x02, 0x60, 0x02, 0x7e, 0x7e, 0x01, 0x7e, 0x60, 0x01, 0x7e, 0x01, 0x7e)...) // types
	m = append(m, section(3, 0x03, 0x00, 0x01, 0x01)...)                                                 // funcs
	m = append(m, section(5, 0x01, 0x00, 0x01)...)                                                       // memory 1
	m = append(m, section(7, 0x03, 3, 'a', 'd', 'd', 0x00, 0x00, 4, 's', 'p', 'i', 'n', 0x00, 0x01,
		4, 'g', 'r', 'o', 'w', 0x00, 0x02)...) // exports
	add := []byte{7, 0x00, 0x20, 0x00, 0x20, 0x01, 0x7c, 0x0b}
	spin := []byte{9, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x42, 0x00, 0x0b}
	grow := []byte{15, 0x00, 0x03, 0x40, 0x41, 0x01, 0x40, 0x00, 0x41, 0x7f, 0x47, 0x0d, 0x00, 0x0b, 0x00, 0x0b}
	code := append(append(append([]byte{0x03}, add...), spin...), grow...)
	return append(m, section(10, code...)...)
}

//go:generate bash testdata/build.sh
