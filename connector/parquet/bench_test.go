package parquet

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkWrite and BenchmarkRead measure rows/s of the test table (14
// columns of every type, SNAPPY), one row per op:
// go test -run '^$' -bench . -benchtime 200000x ./connector/parquet/
func BenchmarkWrite(b *testing.B) {
	f, _ := FromOptions(allFields, map[string]string{"parquet.compression": "SNAPPY"})
	w, _ := f.NewWriter(io.Discard)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := w.Write(allRows[i%len(allRows)]); err != nil {
			b.Fatal(err)
		}
	}
	w.Close()
}

func BenchmarkRead(b *testing.B) {
	f, _ := FromOptions(allFields, map[string]string{"parquet.compression": "SNAPPY"})
	var buf bytes.Buffer
	w, _ := f.NewWriter(&buf)
	for i := range b.N {
		w.Write(allRows[i%len(allRows)])
	}
	w.Close()
	data := buf.Bytes()
	b.ReportAllocs()
	b.ResetTimer()
	r, err := f.OpenReader("bench", bytes.NewReader(data), int64(len(data)))
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
