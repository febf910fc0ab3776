package jdbc

import (
	"testing"
	"time"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
)

// DATE and TIMESTAMP values reach the table exactly in every write mode,
// including Go's zero time.Time (0001-01-01 00:00:00 UTC), which
// go-sql-driver/mysql on its own writes as the zero date 0000-00-00.
func TestTemporalRoundTrip(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	recs := []event.Record{
		ins(1, time.Time{}, time.Time{}), // DATE '0001-01-01', TIMESTAMP '0001-01-01 00:00:00'
		ins(2, utc(2024, 2, 29, 0, 0, 0, 0), utc(2024, 2, 29, 13, 4, 5, 123456000)),
		ins(3, utc(9999, 12, 31, 0, 0, 0, 0), utc(1970, 1, 1, 0, 0, 0, 0)),
		ins(4, nil, utc(2000, 1, 2, 3, 4, 5, 0)),
	}
	modes := []struct {
		name     string
		twoPhase bool // rows reach the table at the commit
		opts     []Opt
	}{
		{"append", false, []Opt{Guarantee(delivery.AtLeastOnce), Append()}},
		{"upsert", false, []Opt{Guarantee(delivery.AtLeastOnce)}},
		{"xa", true, []Opt{Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyXA)}},
		{"checkpoint-table", true, []Opt{Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyCheckpointTable)}},
	}
	eachDB(t, func(t *testing.T, db *testDB) {
		for _, m := range modes {
			t.Run(m.name, func(t *testing.T) {
				tbl := db.table(t, "tmp", "id INT NOT NULL PRIMARY KEY, d DATE, ts "+tsType(db))
				job := db.job(t)
				s := db.newSink(t, tbl, m.opts...)
				w := wctx(job, 0, 1, 0)
				cs := writeAll(t, s, w, 1, recs...)
				if m.twoPhase {
					if err := commit(t, s, w, 1, cs); err != nil {
						t.Fatal(err)
					}
				}
				got := db.query(t, "SELECT id, "+dateText(db, "d")+", "+tsText(db, "ts")+" FROM "+tbl+" ORDER BY id")
				want := [][]string{
					{"1", "0001-01-01", "0001-01-01 00:00:00.000000"},
					{"2", "2024-02-29", "2024-02-29 13:04:05.123456"},
					{"3", "9999-12-31", "1970-01-01 00:00:00.000000"},
					{"4", "", "2000-01-02 03:04:05.000000"},
				}
				if len(got) != len(want) {
					t.Fatalf("rows %q, want %q", got, want)
				}
				for i := range want {
					for j := range want[i] {
						if got[i][j] != want[i][j] {
							t.Errorf("row %d: %q, want %q", i, got[i], want[i])
							break
						}
					}
				}
			})
		}
	})
}

func tsType(db *testDB) string {
	if db.d.name() == "MySQL" {
		return "DATETIME(6)"
	}
	return "TIMESTAMP(6)"
}

// dateText and tsText render a column as text the same way on both
// databases, NULL as "".
func dateText(db *testDB, c string) string {
	if db.d.name() == "MySQL" {
		return "DATE_FORMAT(" + c + ", '%Y-%m-%d')"
	}
	return "to_char(" + c + ", 'YYYY-MM-DD')"
}

func tsText(db *testDB, c string) string {
	if db.d.name() == "MySQL" {
		return "DATE_FORMAT(" + c + ", '%Y-%m-%d %H:%i:%s.%f')"
	}
	return "to_char(" + c + ", 'YYYY-MM-DD HH24:MI:SS.US')"
}
