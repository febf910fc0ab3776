// Command formats measures each format's throughput in records per
// CPU-second (records/s/core): for each, it encodes -n rows of a bills
// table (id, decimal amount, count, timestamp, flag) and decodes them
// back on one goroutine, and divides by the process's CPU time
// (getrusage: user + system, every thread, so garbage collection is
// counted) rather than by wall time, which a shared machine distorts.
// The changelog formats decode Debezium/Canal/Maxwell update messages
// (two rows each: before and after) and encode single rows. avro-confluent
// registers and resolves its schema at the schema registry of
// WEIR_SCHEMA_REGISTRY_URL once (as a job does on its first message) and
// is skipped without it. parquet writes one file of -n rows into memory
// and reads it back.
//
//	eval "$(scripts/services.sh env)"
//	go run ./bench/formats -n 200000
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/connector/parquet"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/types"
)

var bills = []types.Field{
	{Name: "bill_id", Type: types.Type{Kind: types.String, Nullable: true}},
	{Name: "amount", Type: types.Type{Kind: types.Decimal, Precision: 18, Scale: 2, Nullable: true}},
	{Name: "n", Type: types.Type{Kind: types.BigInt, Nullable: true}},
	{Name: "ts", Type: types.Type{Kind: types.Timestamp, Precision: 3, Nullable: true}},
	{Name: "ok", Type: types.Type{Kind: types.Boolean, Nullable: true}},
}

func main() {
	n := flag.Int("n", 200000, "records per format and direction")
	flag.Parse()
	fmt.Printf("%-16s %-10s %12s %12s %10s\n", "format", "direction", "records", "records/s", "rec/s/core")
	for _, b := range benches() {
		if err := b.run(*n); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", b.name, err)
			os.Exit(1)
		}
	}
}

// bench is one format: run measures both directions and prints them.
type bench struct {
	name string
	run  func(n int) error
}

func benches() []bench {
	list := []bench{row("json", nil), row("csv", nil), row("avro", nil)}
	if url := os.Getenv("WEIR_SCHEMA_REGISTRY_URL"); url != "" {
		subject := fmt.Sprintf("weir-bench-formats-%d-value", time.Now().UnixNano())
		list = append(list, row("avro-confluent", map[string]string{"avro-confluent.url": url, "avro-confluent.subject": subject}))
	} else {
		fmt.Fprintln(os.Stderr, "avro-confluent skipped: no WEIR_SCHEMA_REGISTRY_URL (eval \"$(scripts/services.sh env)\")")
	}
	for _, name := range []string{"debezium-json", "canal-json", "maxwell-json"} {
		list = append(list, changelog(name))
	}
	return append(list, bench{"parquet", runParquet})
}

// bill is the i-th row.
func bill(i int) []any {
	return []any{fmt.Sprintf("b-%07d", i), decimal.New(int64(i%100000)*101, -2), int64(i),
		time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond), i%3 != 0}
}

// billRows makes n rows before a measurement, so that it measures the
// format alone.
func billRows(n int) [][]any {
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = bill(i)
	}
	return rows
}

func row(name string, opts map[string]string) bench {
	return bench{name, func(n int) error {
		f, err := format.New(name, bills, opts)
		if err != nil {
			return err
		}
		rows := billRows(n)
		msgs := make([][]byte, n)
		if err := measure(name, "encode", n, func() error {
			for i, r := range rows {
				if msgs[i], err = f.Encode(r); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
		return measure(name, "decode", n, func() error {
			for _, m := range msgs {
				if _, err := f.Decode(m); err != nil {
					return err
				}
			}
			return nil
		})
	}}
}

// updates are one update message per changelog format, %d the row's
// number: two rows each.
var updates = map[string]string{
	"debezium-json": `{"before":{"bill_id":"b-%07[1]d","amount":1000.00,"n":41,"ts":"2026-11-30 08:00:00.000","ok":true},"after":{"bill_id":"b-%07[1]d","amount":1234.56,"n":%[1]d,"ts":"2026-11-30 08:00:01.250","ok":true},"source":{"connector":"mysql","db":"shop","table":"bills","file":"mysql-bin.000003","pos":154},"op":"u","ts_ms":1764489601250}`,
	"canal-json":    `{"data":[{"bill_id":"b-%07[1]d","amount":"1234.56","n":"%[1]d","ts":"2026-11-30 08:00:01.250","ok":"true"}],"old":[{"amount":"1000.00","n":"41"}],"database":"shop","table":"bills","type":"UPDATE","ts":1764489601250}`,
	"maxwell-json":  `{"database":"shop","table":"bills","type":"update","ts":1764489601,"data":{"bill_id":"b-%07[1]d","amount":1234.56,"n":%[1]d,"ts":"2026-11-30 08:00:01.250","ok":true},"old":{"amount":1000.00,"n":41}}`,
}

func changelog(name string) bench {
	return bench{name, func(n int) error {
		c, err := format.NewChangelog(name, bills, nil)
		if err != nil {
			return err
		}
		rows := billRows(n)
		if err := measure(name, "encode", n, func() error {
			for _, r := range rows {
				if _, err := c.EncodeChange(event.Row{Kind: event.UpdateAfter, Fields: r}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
		msgs := make([][]byte, n/2)
		for i := range msgs {
			msgs[i] = fmt.Appendf(nil, updates[name], i)
		}
		return measure(name, "decode", 2*len(msgs), func() error {
			for _, m := range msgs {
				if rows, err := c.DecodeChanges(m); err != nil || len(rows) != 2 {
					return fmt.Errorf("%d rows, %v", len(rows), err)
				}
			}
			return nil
		})
	}}
}

func runParquet(n int) error {
	f, err := parquet.FromOptions(bills, map[string]string{"parquet.compression": "SNAPPY"})
	if err != nil {
		return err
	}
	var file bytes.Buffer
	rows := billRows(n)
	if err := measure("parquet", "write", n, func() error {
		w, err := f.NewWriter(&file)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := w.Write(r); err != nil {
				return err
			}
		}
		return w.Close()
	}); err != nil {
		return err
	}
	return measure("parquet", "read", n, func() error {
		r, err := f.OpenReader("bench.parquet", bytes.NewReader(file.Bytes()), int64(file.Len()))
		if err != nil {
			return err
		}
		defer r.Close()
		for got := 0; ; got++ {
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				if got != n {
					return fmt.Errorf("read %d rows of %d", got, n)
				}
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
}

// measure runs work (records records) and prints its rate by wall time
// and by process CPU time.
func measure(name, dir string, records int, work func() error) error {
	runtime.GC() // the garbage of the setup is not the format's
	cpu0, t0 := cpuTime(), time.Now()
	if err := work(); err != nil {
		return err
	}
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	fmt.Printf("%-16s %-10s %12d %12.0f %10.0f\n", name, dir, records, float64(records)/wall.Seconds(), float64(records)/cpu.Seconds())
	return nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
