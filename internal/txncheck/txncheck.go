// Package txncheck finds prepared transactions a job left behind: the
// check of `weir chaos` and of the soak in bench/soak.
package txncheck

import (
	"database/sql"
	"sort"
	"strings"
	"time"
)

// Lingering returns the transactions that list shows in each of polls
// listings, every apart; it returns at once when a listing is empty.
//
// Prepared transactions are listed server-wide (XA RECOVER) or per
// database (pg_prepared_xacts), so another job on the same server shows
// its in-flight transactions too, each for a checkpoint's moment. A
// leftover of the job under test never goes away: only what every
// listing shows counts as left behind.
func Lingering(list func() ([]string, error), polls int, every time.Duration) ([]string, error) {
	var seen map[string]bool
	for i := 0; i < polls; i++ {
		if i > 0 {
			time.Sleep(every)
		}
		ids, err := list()
		if err != nil {
			return nil, err
		}
		now := map[string]bool{}
		for _, id := range ids {
			if seen == nil || seen[id] {
				now[id] = true
			}
		}
		if seen = now; len(seen) == 0 {
			return nil, nil
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}

// Split parts ids into those that start with prefix+":" and the rest;
// an empty prefix claims every id.
func Split(ids []string, prefix string) (ours, others []string) {
	for _, id := range ids {
		if prefix == "" || strings.HasPrefix(id, prefix+":") {
			ours = append(ours, id)
		} else {
			others = append(others, id)
		}
	}
	return ours, others
}

// XARecover lists the prepared XA transactions of a MySQL/MariaDB server
// (their data).
func XARecover(db *sql.DB) ([]string, error) {
	rows, err := db.Query("XA RECOVER")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var format, gtridLen, bqualLen int64
		var data string
		if err := rows.Scan(&format, &gtridLen, &bqualLen, &data); err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, rows.Err()
}
