package mysqlcdc

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// syncerConfig is the replication connection of replica serverID.
func (o Options) syncerConfig(serverID uint32, flavor string, log *slog.Logger) replication.BinlogSyncerConfig {
	return replication.BinlogSyncerConfig{ServerID: serverID, Flavor: flavor,
		Host: o.Hostname, Port: uint16(o.Port), User: o.Username, Password: o.Password,
		UseDecimal: true, TimestampStringLocation: time.UTC, DisableRetrySync: true, HeartbeatPeriod: 10 * time.Second,
		Logger: slog.New(quiet{log.Handler()}).With("component", "go-mysql")}
}

// binlogAt is where 'scan.startup.mode' = 'timestamp' starts reading: the
// start of the newest binlog file created at or before t (Unix seconds),
// or of the oldest file when all are newer. Every transaction in an older
// file was written before that file's successor began, so before t, and
// the stream would skip it anyway; searching spares reading a day of
// binlog files from the first.
func (f *fetcher) binlogAt(ctx context.Context, db *sql.DB, t int64) (BinlogPos, error) {
	files, err := binlogFiles(ctx, db)
	if err != nil {
		return BinlogPos{}, err
	}
	flavor, err := flavorOf(ctx, db)
	if err != nil {
		return BinlogPos{}, f.o.connectErr(err)
	}
	cfg := f.o.syncerConfig(f.serverID, flavor, f.log)
	i, err := newestAtOrBefore(len(files), t, func(i int) (int64, error) { return fileCreated(ctx, cfg, files[i]) })
	if err != nil {
		return BinlogPos{}, fmt.Errorf("mysql-cdc table %q: 'scan.startup.timestamp-millis': find the binlog file to start in "+
			"as replica %d: %w", f.o.Name, f.serverID, err)
	}
	f.log.Info("mysql-cdc: timestamp startup", "table", f.o.Database+"."+f.o.Table, "from", files[i], "of_files", len(files))
	return BinlogPos{File: files[i], Pos: 4}, nil
}

// newestAtOrBefore is the last of n files whose creation time (created,
// rising with the index) is at or before t; 0 when none is. It asks
// created about log2(n) files.
func newestAtOrBefore(n int, t int64, created func(int) (int64, error)) (int, error) {
	lo, hi := 0, n-1 // the answer lies in [lo, hi]
	for lo < hi {
		mid := (lo + hi + 1) / 2
		c, err := created(mid)
		if err != nil {
			return 0, err
		}
		if c <= t {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo, nil
}

// binlogFiles are the server's binlog files, oldest first.
func binlogFiles(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := showRows(ctx, db, "SHOW BINARY LOGS")
	if err != nil {
		return nil, err
	}
	files := make([]string, len(rows))
	for i, r := range rows {
		files[i] = r[0]
	}
	return files, nil
}

// fileCreated is when a binlog file was begun: the time of its format
// description event, the first real event of every file.
func fileCreated(ctx context.Context, cfg replication.BinlogSyncerConfig, file string) (int64, error) {
	s := replication.NewBinlogSyncer(cfg)
	defer s.Close()
	st, err := s.StartSync(mysql.Position{Name: file, Pos: 4})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", file, err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		ev, err := st.GetEvent(ctx)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", file, err)
		}
		if ev.Header.EventType == replication.FORMAT_DESCRIPTION_EVENT {
			return int64(ev.Header.Timestamp), nil
		}
	}
}
