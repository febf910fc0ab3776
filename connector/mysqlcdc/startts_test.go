package mysqlcdc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/cdc/cdctest"
)

// The search finds the last file created at or before t, the first when
// none is, asking about log2(n) files.
func TestNewestAtOrBefore(t *testing.T) {
	created := []int64{10, 20, 20, 30, 45, 60, 61, 90, 100, 120, 121, 150, 151, 152, 200, 260}
	for _, at := range []int64{0, 9, 10, 19, 20, 29, 30, 44, 45, 59, 60, 61, 62, 99, 100, 150, 151, 152, 199, 200, 259, 260, 1000} {
		want := 0
		for i, c := range created {
			if c <= at {
				want = i
			}
		}
		asked := 0
		got, err := newestAtOrBefore(len(created), at, func(i int) (int64, error) { asked++; return created[i], nil })
		if err != nil || got != want {
			t.Fatalf("at %d: file %d, %v; want %d", at, got, err, want)
		}
		if asked > 4 {
			t.Fatalf("at %d: asked about %d of 16 files; want at most 4", at, asked)
		}
	}
	if got, err := newestAtOrBefore(1, 5, func(int) (int64, error) { return 0, errors.New("not asked") }); got != 0 || err != nil {
		t.Fatalf("one file: %d, %v", got, err)
	}
	boom := errors.New("boom")
	if _, err := newestAtOrBefore(3, 5, func(int) (int64, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("a failing probe: %v", err)
	}
}

// A 'timestamp' startup begins in the newest binlog file created at or
// before the startup time, not in the server's first, and still reads
// exactly the changes from that time on.
func TestTimestampStartupSearchesBinlogFiles(t *testing.T) {
	f := newFixture(t, 10)
	f.exec("UPDATE " + f.q() + " SET amount = 1 WHERE id = 1") // before the start time, in an older file
	f.exec("FLUSH BINARY LOGS")
	fileA := f.masterFile()
	f.exec("UPDATE " + f.q() + " SET amount = 2 WHERE id = 2") // before the start time, in file A
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	start := time.Now()
	f.exec("DELETE FROM " + f.q() + " WHERE id = 5") // after it, in file A
	time.Sleep(time.Until(start.Truncate(time.Second).Add(time.Second)))
	f.exec("FLUSH BINARY LOGS")
	fileB := f.masterFile()
	f.exec("UPDATE " + f.q() + " SET amount = 3 WHERE id = 3") // after it, in file B

	ids, err := f.opts.serverID(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	fe := &fetcher{o: f.opts, serverID: ids, log: slog.Default()}
	db, err := f.opts.open()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	files, err := binlogFiles(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := fe.binlogAt(context.Background(), db, start.Unix())
	if err != nil {
		t.Fatal(err)
	}
	// Other tests share the server and may flush too: the start lies in
	// [A, B), where the server's first file is older than A.
	if pos.Pos != 4 || pos.File < fileA || pos.File >= fileB {
		t.Fatalf("timestamp startup at %s begins at %s; want the start of a file in [%s, %s)", start, pos, fileA, fileB)
	}
	if files[0] >= fileA {
		t.Fatalf("the server's first file %s is not older than %s: the test shows nothing", files[0], fileA)
	}
	if pos, err = fe.binlogAt(context.Background(), db, 0); err != nil || pos.File != files[0] {
		t.Fatalf("timestamp startup at 1970 begins at %s, %v; want the first file %s", pos, err, files[0])
	}

	f.opts.StartupMode, f.opts.StartupTimestamp = "timestamp", start
	s, splits := f.source()
	r := f.openReader(s, 0, 1, splits)
	defer r.Close()
	c := &cdctest.Collector{}
	cdctest.PollUntil(t, r, c, f.fence(9_000_005)(r))
	if got := fmt.Sprint(c.Rows); got != "[-D[5, 5, 50, row 5] -U[3, 3, 30, row 3] +U[3, 3, 3, row 3] +I[9000005, 0, 0, fence]]" {
		t.Fatalf("timestamp read %s", got)
	}
}
