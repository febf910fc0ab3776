package format

import (
	"math/big"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/shopspring/decimal"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/weirstream/weir/event"
)

// BenchmarkFormats decodes and encodes one bills row (id, account, amount,
// timestamp and a few more: the billSchema) in each format, single
// goroutine, reporting records/s on one core:
//
//	go test -run '^$' -bench BenchmarkFormats -benchtime 20000x ./connector/format/
func BenchmarkFormats(b *testing.B) {
	row := []any{"b-0000001", decimal.RequireFromString("1234.56"), int64(42), time.Date(2026, 11, 30, 8, 0, 1, 250e6, time.UTC), true}
	avroF, err := NewAvro(billSchema, true)
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range []struct {
		name string
		f    Format
	}{{"json", &JSON{Fields: billSchema}}, {"csv", &CSV{Fields: billSchema, Delimiter: ','}}, {"avro", avroF}} {
		msg, err := f.f.Encode(row)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(f.name+"/decode", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := f.f.Decode(msg); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
		b.Run(f.name+"/encode", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := f.f.Encode(row); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
	for _, name := range changelogFormats {
		c, err := NewChangelog(name, billSchema, nil)
		if err != nil {
			b.Fatal(err)
		}
		// An update: two rows from one message (Debezium's before and
		// after; Canal's and Maxwell's data and old), which is what a
		// CDC topic mostly holds.
		msg := map[string]string{
			"debezium-json": `{"before":{"bill_id":"b-0000001","amount":1000.00,"n":41,"ts":"2026-11-30 08:00:00.000","ok":true},"after":{"bill_id":"b-0000001","amount":1234.56,"n":42,"ts":"2026-11-30 08:00:01.250","ok":true},"source":{"connector":"mysql","db":"shop","table":"bills","file":"mysql-bin.000003","pos":154},"op":"u","ts_ms":1764489601250}`,
			"canal-json":    `{"data":[{"bill_id":"b-0000001","amount":"1234.56","n":"42","ts":"2026-11-30 08:00:01.250","ok":"true"}],"old":[{"amount":"1000.00","n":"41"}],"database":"shop","table":"bills","type":"UPDATE","ts":1764489601250}`,
			"maxwell-json":  `{"database":"shop","table":"bills","type":"update","ts":1764489601,"data":{"bill_id":"b-0000001","amount":1234.56,"n":42,"ts":"2026-11-30 08:00:01.250","ok":true},"old":{"amount":1000.00,"n":41}}`,
		}[name]
		b.Run(name+"/decode-update", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if rows, err := c.DecodeChanges([]byte(msg)); err != nil || len(rows) != 2 {
					b.Fatal(rows, err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "messages/s")
		})
		b.Run(name+"/encode", func(b *testing.B) {
			r := event.Row{Kind: event.UpdateAfter, Fields: row}
			for i := 0; i < b.N; i++ {
				if _, err := c.EncodeChange(r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkAvroConfluent: the bills row through avro-confluent, with the
// registry's answers cached as after a job's first message (so no registry
// is reached): encode, decode of the table's own schema (the fast path)
// and decode of another writer's schema (fields reordered, one more: the
// resolving path), single goroutine, records/s on one core:
//
//	go test -run '^$' -bench BenchmarkAvroConfluent -benchtime 20000x ./connector/format/
func BenchmarkAvroConfluent(b *testing.B) {
	row := []any{"b-0000001", decimal.RequireFromString("1234.56"), int64(42), time.Date(2026, 11, 30, 8, 0, 1, 250e6, time.UTC), true}
	a, err := NewAvroConfluent(billSchema, map[string]string{"avro-confluent.url": "http://127.0.0.1:1"})
	if err != nil {
		b.Fatal(err)
	}
	const other = `{"type":"record","name":"bill","fields":[{"name":"source","type":"string"},
		{"name":"n","type":["null","long"]},{"name":"bill_id","type":["null","string"]},
		{"name":"amount","type":["null",{"type":"bytes","logicalType":"decimal","precision":18,"scale":2}]},
		{"name":"ts","type":["null",{"type":"long","logicalType":"timestamp-millis"}]},{"name":"ok","type":["null","boolean"]}]}`
	a.mu.id = 1
	a.mu.writers[1] = a.compile(1, sr.Schema{Schema: a.Schema()})
	a.mu.writers[2] = a.compile(2, sr.Schema{Schema: other})
	if !a.mu.writers[1].fast || a.mu.writers[2].dec == nil {
		b.Fatalf("writers %+v", a.mu.writers)
	}
	own, err := a.Encode(row)
	if err != nil {
		b.Fatal(err)
	}
	body, err := avro.Marshal(avro.MustParse(other), map[string]any{"source": "mysql", "n": int64(42), "bill_id": "b-0000001",
		"amount": big.NewRat(123456, 100), "ts": row[3], "ok": true})
	if err != nil {
		b.Fatal(err)
	}
	resolved := append([]byte{0, 0, 0, 0, 2}, body...)
	b.Run("encode", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := a.Encode(row); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	for _, c := range []struct {
		name string
		msg  []byte
	}{{"decode-own-schema", own}, {"decode-resolved", resolved}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if r, err := a.Decode(c.msg); err != nil || len(r) != 5 {
					b.Fatal(r, err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
