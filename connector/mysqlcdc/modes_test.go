package mysqlcdc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/cdc/cdctest"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/types"
)

// A row reads the same from the snapshot (text protocol) and from the
// binlog (row images): string keys in byte order across chunk bounds,
// TIMESTAMP shown in 'server-time-zone' or as the instant (TIMESTAMP_LTZ),
// DATETIME as written, DECIMAL, TINYINT(1) as BOOLEAN, INT UNSIGNED past
// the signed range, VARBINARY and NULL.
func TestSnapshotAndBinlogValuesAgree(t *testing.T) {
	f := newFixture(t, 0)
	f.table = "typed"
	f.exec("CREATE TABLE " + f.q() + ` (id VARCHAR(20) PRIMARY KEY, ts TIMESTAMP(3) NULL, ts_ltz TIMESTAMP(3) NULL,
		dt DATETIME(3), d DATE, amt DECIMAL(10,2), flag TINYINT(1), u INT UNSIGNED, bin VARBINARY(8))`)
	ins := "INSERT INTO " + f.q() + " VALUES (?, '2026-01-15 10:00:00.125', '2026-01-15 10:00:00.125', '2026-07-01 08:30:00.5', " +
		"'2026-02-28', 12345.67, 1, 4000000000, x'00ff10'), (?, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
	f.exec(ins, "B", "a") // 'B' < 'a' in byte order, not in utf8mb4_general_ci
	f.exec(ins, "c", "Z")
	f.opts.Table, f.opts.ChunkSize = "typed", 2
	f.opts.TimeZone, _ = time.LoadLocation("Europe/Berlin")
	f.opts.PrimaryKey = []string{"id"}
	f.opts.Fields = []types.Field{{Name: "id", Type: text}, {Name: "ts", Type: types.Type{Kind: types.Timestamp, Precision: 3}},
		{Name: "ts_ltz", Type: types.Type{Kind: types.TimestampLTZ, Precision: 3}}, {Name: "dt", Type: types.Type{Kind: types.Timestamp, Precision: 3}},
		{Name: "d", Type: types.Type{Kind: types.Date}}, {Name: "amt", Type: types.Type{Kind: types.Decimal, Precision: 10, Scale: 2}},
		{Name: "flag", Type: types.Type{Kind: types.Boolean}}, {Name: "u", Type: bigint}, {Name: "bin", Type: types.Type{Kind: types.Bytes}}}
	s, err := NewSource(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	splits, err := s.Enumerate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(splits) != 2 {
		t.Fatalf("%d splits of 4 keys by 2, want 2", len(splits))
	}
	r := f.openReader(s, 0, 1, splits)
	defer r.Close()
	c := &cdctest.Collector{}
	cdctest.PollUntil(t, r, c, func() bool { return len(c.Rows) == 4 && !r.Snapshotting() })
	snap := fmt.Sprint(c.Rows)
	f.exec("DELETE FROM " + f.q())
	f.exec(ins, "B", "a")
	f.exec(ins, "c", "Z")
	cdctest.PollUntil(t, r, c, func() bool { return len(c.Rows) == 12 })
	full := "2026-01-15 11:00:00.125 +0000 UTC, 2026-01-15 10:00:00.125 +0000 UTC, 2026-07-01 08:30:00.5 +0000 UTC, " +
		"2026-02-28 00:00:00 +0000 UTC, 12345.67, true, 4000000000, [0 255 16]"
	null := "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"
	want := "[+I[B, " + full + "] +I[Z, " + null + "] +I[a, " + null + "] +I[c, " + full + "]]"
	if snap != want {
		t.Fatalf("snapshot rows\n %s\nwant\n %s", snap, want)
	}
	inserted := append([]event.Row(nil), c.Rows[8:]...)
	sortRows(inserted)
	if got := fmt.Sprint(inserted); got != want {
		t.Fatalf("binlog rows\n %s\nwant (as the snapshot read them)\n %s", got, want)
	}
}

// sortRows orders rows by their string key.
func sortRows(rows []event.Row) {
	for i := range rows {
		for j := i + 1; j < len(rows); j++ {
			if rows[j].Fields[0].(string) < rows[i].Fields[0].(string) {
				rows[i], rows[j] = rows[j], rows[i]
			}
		}
	}
}

// 'latest-offset' reads no snapshot, only what commits after the start;
// 'timestamp' reads the binlog's transactions from that time on, none
// before (the binlog keeps seconds: the test waits for the next one).
func TestStartupModes(t *testing.T) {
	f := newFixture(t, 10)
	f.opts.StartupMode = "latest-offset"
	s, err := NewSource(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	splits, err := s.Enumerate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := f.openReader(s, 0, 1, splits)
	defer r.Close()
	c := &cdctest.Collector{}
	cdctest.PollUntil(t, r, c, func() bool { return !r.Snapshotting() })
	f.exec("UPDATE " + f.q() + " SET amount = 1 WHERE id = 3")
	cdctest.PollUntil(t, r, c, f.fence(9_000_003)(r))
	if got := fmt.Sprint(c.Rows); got != "[-U[3, 3, 30, row 3] +U[3, 3, 1, row 3] +I[9000003, 0, 0, fence]]" {
		t.Fatalf("latest-offset read %s", got)
	}

	sec := time.Now().Truncate(time.Second)
	f.exec("UPDATE " + f.q() + " SET amount = 2 WHERE id = 4") // before the start time
	time.Sleep(time.Until(sec.Add(time.Second)))
	f.opts.StartupMode, f.opts.StartupTimestamp = "timestamp", time.Now()
	f.exec("DELETE FROM " + f.q() + " WHERE id = 5")
	s, err = NewSource(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if splits, err = s.Enumerate(context.Background()); err != nil {
		t.Fatal(err)
	}
	r2 := f.openReader(s, 0, 1, splits)
	defer r2.Close()
	c = &cdctest.Collector{}
	cdctest.PollUntil(t, r2, c, f.fence(9_000_004)(r2))
	if got := fmt.Sprint(c.Rows); got != "[-D[5, 5, 50, row 5] +I[9000004, 0, 0, fence]]" {
		t.Fatalf("timestamp read %s", got)
	}
}

// UNSIGNED integers at and past the signed range read the same from the
// snapshot and the binlog, in the types Flink CDC maps them to (BIGINT
// UNSIGNED as DECIMAL(20, 0)).
func TestUnsignedSnapshotAndBinlogAgree(t *testing.T) {
	f := newFixture(t, 0)
	f.table = "unsigned_h10"
	f.exec("CREATE TABLE " + f.q() + ` (id INT PRIMARY KEY, ti TINYINT UNSIGNED, si SMALLINT UNSIGNED,
		mi MEDIUMINT UNSIGNED, i INT UNSIGNED, bi BIGINT UNSIGNED)`)
	ins := "INSERT INTO " + f.q() + " VALUES (1, 255, 65535, 16777215, 4294967295, 18446744073709551615), " +
		"(2, 128, 32768, 8388608, 2147483648, 9223372036854775808), (3, 1, 2, 3, 4, 5)"
	f.exec(ins)
	f.opts.Table = f.table
	null := func(k types.Kind) types.Type { return types.Type{Kind: k, Nullable: true} }
	f.opts.Fields = []types.Field{{Name: "id", Type: intT}, {Name: "ti", Type: null(types.SmallInt)}, {Name: "si", Type: null(types.Int)},
		{Name: "mi", Type: null(types.Int)}, {Name: "i", Type: null(types.BigInt)},
		{Name: "bi", Type: types.Type{Kind: types.Decimal, Precision: 20, Nullable: true}}}
	s, splits := f.source()
	r := f.openReader(s, 0, 1, splits)
	defer r.Close()
	c := &cdctest.Collector{}
	cdctest.PollUntil(t, r, c, func() bool { return len(c.Rows) == 3 && !r.Snapshotting() })
	want := "[+I[1, 255, 65535, 16777215, 4294967295, 18446744073709551615] +I[2, 128, 32768, 8388608, 2147483648, 9223372036854775808] +I[3, 1, 2, 3, 4, 5]]"
	if got := fmt.Sprint(c.Rows); got != want {
		t.Fatalf("snapshot rows\n %s\nwant\n %s", got, want)
	}
	f.exec("DELETE FROM " + f.q())
	f.exec(ins)
	cdctest.PollUntil(t, r, c, func() bool { return len(c.Rows) == 9 })
	if got := fmt.Sprint(c.Rows[6:]); got != want {
		t.Fatalf("binlog rows\n %s\nwant (as the snapshot read them)\n %s", got, want)
	}
}
