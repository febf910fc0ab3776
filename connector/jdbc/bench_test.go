package jdbc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
)

// BenchmarkSink writes b.N rows through a writer and its committer, with a
// checkpoint every 2,000 rows, and reports rows/s per mode and database.
// Buffers flush at the default 100 rows. Not asserted.
//
//	go test -run XXX -bench Sink -benchtime 20000x ./connector/jdbc/
func BenchmarkSink(b *testing.B) {
	modes := []struct {
		name  string
		keyed bool
		opts  []Opt
	}{
		{"append", false, []Opt{Guarantee(delivery.AtLeastOnce)}},
		{"upsert", true, []Opt{Guarantee(delivery.AtLeastOnce)}},
		{"xa", false, []Opt{Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyXA)}},
		{"xa-upsert", true, []Opt{Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyXA)}},
		{"checkpoint-table", true, []Opt{Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyCheckpointTable)}},
	}
	for _, kind := range []string{"mysql", "postgres"} {
		for _, m := range modes {
			b.Run(kind+"/"+m.name, func(b *testing.B) {
				db := openTestDB(b, kind)
				ddl := "id BIGINT NOT NULL, name VARCHAR(40), amount BIGINT"
				if m.keyed {
					ddl = "id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(40), amount BIGINT"
				}
				tbl := db.table(b, "bench", ddl)
				job := db.job(b)
				s := db.newSink(b, tbl, append([]Opt{BufferFlush(DefaultBufferFlushMaxRows, 0)}, m.opts...)...)
				benchSink(b, s, job)
			})
		}
	}
}

func benchSink(b *testing.B, s *Sink, job string) {
	wc := wctx(job, 0, 1, 0)
	w, err := s.CreateWriter(wc)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	c, err := s.CreateCommitter(wc)
	if err != nil {
		b.Fatal(err)
	}
	if c != nil {
		defer c.Close()
	}
	const perCheckpoint = 2000
	id := event.CheckpointID(0)
	checkpoint := func() {
		id++
		cs, err := w.PrepareCommit(id)
		if err != nil {
			b.Fatal(err)
		}
		if c != nil {
			if err := c.Commit(context.Background(), id, cs); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		// Keys repeat every 5,000 rows, so upserts update as well as insert.
		r := event.Row{Kind: event.Insert, Fields: []any{int64(i % 5000), fmt.Sprintf("name-%d", i), int64(i)}}
		if err := w.Write(event.Record{Value: r}); err != nil {
			b.Fatal(err)
		}
		if (i+1)%perCheckpoint == 0 {
			checkpoint()
		}
	}
	checkpoint()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
}
