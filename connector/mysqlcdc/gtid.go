package mysqlcdc

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// gtidPos is MariaDB's GTID position as the stream passes it: the last
// GTID (domain-server-sequence) of every replication domain, as
// gtid_slave_pos holds it. nil when not known (MySQL, or a server that
// could not say): then checkpoints carry file and offset only.
type gtidPos map[uint32]string

// parseGTIDPos reads "0-1-100,1-2-7".
func parseGTIDPos(s string) (gtidPos, error) {
	g := gtidPos{}
	for _, one := range strings.Split(s, ",") {
		if one = strings.TrimSpace(one); one == "" {
			continue
		}
		id, err := mysql.ParseMariadbGTID(one)
		if err != nil {
			return nil, fmt.Errorf("mysql-cdc: GTID position %q: %w", s, err)
		}
		g[id.DomainID] = id.String()
	}
	return g, nil
}

func (g gtidPos) String() string {
	out := make([]string, 0, len(g))
	for _, v := range g {
		out = append(out, v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// after follows ev and returns the position after it when it ends a
// transaction ("" otherwise, or when the position is not known).
func (g gtidPos) after(ev *replication.BinlogEvent) string {
	if g == nil {
		return ""
	}
	switch e := ev.Event.(type) {
	case *replication.MariadbGTIDEvent:
		g[e.GTID.DomainID] = e.GTID.String()
	case *replication.XIDEvent, *replication.QueryEvent:
		return g.String()
	}
	return ""
}

// start opens the stream: by GTID when gtids is set (MariaDB), else by
// file and offset, learning the GTID position there from the server
// (BINLOG_GTID_POS; nil when it cannot).
func (h *hub) start(ctx context.Context, syncer *replication.BinlogSyncer, from BinlogPos, gtids, flavor string) (*replication.BinlogStreamer, gtidPos, error) {
	if gtids != "" && flavor == mysql.MariaDBFlavor {
		g, err := parseGTIDPos(gtids)
		if err != nil {
			return nil, nil, err
		}
		set, err := mysql.ParseMariadbGTIDSet(g.String())
		if err != nil {
			return nil, nil, err
		}
		st, err := syncer.StartSyncGTID(set)
		return st, g, err
	}
	st, err := syncer.StartSync(mysql.Position{Name: from.File, Pos: from.Pos})
	if err != nil || flavor != mysql.MariaDBFlavor {
		return st, nil, err
	}
	return st, h.gtidPosAt(ctx, from), nil
}

// gtidPosAt asks the server for the GTID position at a binlog file and
// offset; nil when it cannot say.
func (h *hub) gtidPosAt(ctx context.Context, at BinlogPos) gtidPos {
	db, err := h.o.open()
	if err != nil {
		return nil
	}
	defer db.Close()
	var s sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT BINLOG_GTID_POS(?, ?)", at.File, at.Pos).Scan(&s); err != nil || !s.Valid {
		h.log.Warn("mysql-cdc: no GTID position for the binlog position: checkpoints hold file and offset only",
			"at", at.String(), "err", err)
		return nil
	}
	g, err := parseGTIDPos(s.String)
	if err != nil {
		return nil
	}
	return g
}
