package jdbc

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/types"
)

// fakeClock is the cache's time, moved by hand.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) advance(d time.Duration) { c.now = c.now.Add(d) }
func newFakeClock() *fakeClock               { return &fakeClock{now: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)} }
func lookupTypes() []types.Type {
	return []types.Type{{Kind: types.Int}, {Kind: types.String, Nullable: true}, {Kind: types.Decimal, Precision: 10, Scale: 2, Nullable: true},
		{Kind: types.Timestamp, Precision: 3, Nullable: true}, {Kind: types.Boolean, Nullable: true}}
}

// dimTable creates a dimension table h9_dim_… (id, name, price, ts, ok) on
// db with two rows.
func dimTable(t *testing.T, db *testDB) string {
	t.Helper()
	boolType := "BOOLEAN"
	tbl := db.table(t, "h9_dim", "id INT NOT NULL PRIMARY KEY, name VARCHAR(20), price DECIMAL(10,2), ts "+tsType(db)+", ok "+boolType)
	db.exec(t, "INSERT INTO "+tbl+" VALUES (1, 'one', 1.50, '2024-03-05 10:11:12.125', true), (2, NULL, NULL, NULL, NULL)")
	return tbl
}

func openLookup(t *testing.T, db *testDB, tbl string, m map[string]string, clock *fakeClock) *LookupFunction {
	t.Helper()
	m["url"], m["table-name"] = db.url, tbl
	o, err := ParseLookupOptions(m)
	if err != nil {
		t.Fatal(err)
	}
	o.Columns, o.Types, o.Keys, o.Now = []string{"id", "name", "price", "ts", "ok"}, lookupTypes(), []int{0}, clock.Now
	l, err := NewLookup(o)
	if err != nil {
		t.Fatal(err)
	}
	f, err := l.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// look returns the rows of key id as text.
func look(t *testing.T, f *LookupFunction, id int64) string {
	t.Helper()
	rows, err := f.Lookup(context.Background(), []any{id})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprint(r))
	}
	return strings.Join(out, "; ")
}

// Each type comes back as Weir's value of the column's SQL type; NULLs as
// nil; a missing key as no rows.
func TestLookupValues(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := dimTable(t, db)
		f := openLookup(t, db, tbl, map[string]string{}, newFakeClock())
		rows, err := f.Lookup(context.Background(), []any{int64(1)})
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%#v", rows[0][0]) + " " + fmt.Sprintf("%q", rows[0][1]) + " " + rows[0][2].(fmt.Stringer).String() +
			" " + rows[0][3].(time.Time).Format(time.RFC3339Nano) + " " + fmt.Sprint(rows[0][4])
		if want := `1 "one" 1.5 2024-03-05T10:11:12.125Z true`; len(rows) != 1 || got != want {
			t.Errorf("key 1: got %d rows, %s; want %s", len(rows), got, want)
		}
		if got := look(t, f, 2); got != "[2 <nil> <nil> <nil> <nil>]" {
			t.Errorf("key 2: %s", got)
		}
		if got := look(t, f, 3); got != "" {
			t.Errorf("key 3: %s, want no rows", got)
		}
	})
}

// The PARTIAL cache by behaviour: an UPDATE of a cached key is not seen
// until expire-after-write passes; without a cache it is seen at once.
func TestLookupCacheExpireAfterWrite(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := dimTable(t, db)
		clock := newFakeClock()
		cached := openLookup(t, db, tbl, map[string]string{"lookup.cache": "PARTIAL",
			"lookup.partial-cache.expire-after-write": "10 s"}, clock)
		none := openLookup(t, db, tbl, map[string]string{"lookup.cache": "NONE"}, clock)
		before := look(t, cached, 1)
		if got := look(t, none, 1); got != before {
			t.Fatalf("NONE %s, PARTIAL %s", got, before)
		}
		db.exec(t, "UPDATE "+tbl+" SET name = 'uno' WHERE id = 1")
		clock.advance(9 * time.Second)
		if got := look(t, cached, 1); got != before {
			t.Errorf("cached after 9 s: %s, want the cached %s", got, before)
		}
		if got := look(t, none, 1); !strings.Contains(got, "uno") {
			t.Errorf("NONE: %s, want the update at once", got)
		}
		clock.advance(time.Second)
		if got := look(t, cached, 1); !strings.Contains(got, "uno") {
			t.Errorf("cached after 10 s: %s, want the update", got)
		}
		if cached.Queries() != 2 || none.Queries() != 2 {
			t.Errorf("queries: cached %d, none %d; want 2 and 2", cached.Queries(), none.Queries())
		}
	})
}

// expire-after-access keeps a key used often; max-rows evicts the least
// recently used key; a missing key is cached unless cache-missing-key is
// false, and then an INSERT shows at the next lookup.
func TestLookupCacheAccessSizeMissing(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := dimTable(t, db)
		clock := newFakeClock()
		f := openLookup(t, db, tbl, map[string]string{"lookup.cache": "partial", "lookup.partial-cache.max-rows": "2",
			"lookup.partial-cache.expire-after-access": "5 s"}, clock)
		look(t, f, 1)
		for range 3 { // used every 4 s: stays although 12 s pass
			clock.advance(4 * time.Second)
			look(t, f, 1)
		}
		if f.Queries() != 1 {
			t.Errorf("expire-after-access: %d queries, want 1", f.Queries())
		}
		look(t, f, 2)
		look(t, f, 3) // missing, cached (default): evicts 1, the least recently used
		look(t, f, 3)
		look(t, f, 2)
		if f.Queries() != 3 || f.cache.len() != 2 {
			t.Errorf("max-rows 2: %d queries, %d keys cached; want 3 and 2", f.Queries(), f.cache.len())
		}
		look(t, f, 1)
		if f.Queries() != 4 {
			t.Errorf("evicted key 1 not queried again: %d queries", f.Queries())
		}
		clock.advance(5 * time.Second) // not accessed for 5 s: all expire

		miss := openLookup(t, db, tbl, map[string]string{"lookup.cache": "PARTIAL", "lookup.partial-cache.expire-after-write": "1 h",
			"lookup.partial-cache.cache-missing-key": "false"}, clock)
		hit := openLookup(t, db, tbl, map[string]string{"lookup.cache": "PARTIAL", "lookup.partial-cache.expire-after-write": "1 h"}, clock)
		look(t, miss, 4)
		look(t, hit, 4)
		db.exec(t, "INSERT INTO "+tbl+" (id, name) VALUES (4, 'four')")
		if got := look(t, miss, 4); !strings.Contains(got, "four") || miss.Queries() != 2 {
			t.Errorf("cache-missing-key false: %s after %d queries, want the new row from a second query", got, miss.Queries())
		}
		if got := look(t, hit, 4); got != "" || hit.Queries() != 1 {
			t.Errorf("cache-missing-key true: %s after %d queries, want the cached miss", got, hit.Queries())
		}
	})
}

// The legacy options make the same cache: lookup.cache.max-rows with
// lookup.cache.ttl (default 10 s).
func TestLookupLegacyCache(t *testing.T) {
	o, err := ParseLookupOptions(map[string]string{"lookup.cache.max-rows": "100", "lookup.cache.caching-missing-key": "false"})
	if err != nil {
		t.Fatal(err)
	}
	want := CacheOptions{MaxRows: 100, ExpireAfterWrite: 10 * time.Second}
	if o.Cache == nil || *o.Cache != want || o.MaxRetries != 3 {
		t.Fatalf("got %+v, retries %d; want %+v, 3", o.Cache, o.MaxRetries, want)
	}
	if o, _ := ParseLookupOptions(map[string]string{"lookup.cache.ttl": "1 min"}); o.Cache != nil {
		t.Errorf("ttl without max-rows: cache %+v, want none", o.Cache)
	}
}

func TestLookupOptionErrors(t *testing.T) {
	for _, c := range []struct {
		m    map[string]string
		want string
	}{
		{map[string]string{"lookup.cache": "FULL"}, `jdbc: option 'lookup.cache': "FULL" is not a lookup cache; want NONE or PARTIAL (FULL is not supported yet)`},
		{map[string]string{"lookup.cache": "PARTIAL"}, `jdbc: option 'lookup.cache': PARTIAL needs at least one of 'lookup.partial-cache.max-rows', ` +
			`'lookup.partial-cache.expire-after-write' and 'lookup.partial-cache.expire-after-access'`},
		{map[string]string{"lookup.partial-cache.max-rows": "-1"}, `jdbc: option 'lookup.partial-cache.max-rows': "-1" is not a whole number ≥ 0`},
		{map[string]string{"lookup.partial-cache.expire-after-write": "soon"}, `jdbc: option 'lookup.partial-cache.expire-after-write': "soon" is not a duration (e.g. '10 s', '5 min')`},
		{map[string]string{"lookup.partial-cache.cache-missing-key": "yes"}, `jdbc: option 'lookup.partial-cache.cache-missing-key': "yes" is not true or false`},
		{map[string]string{"lookup.max-retries": "x", "lookup.cache.ttl": "y"}, `jdbc: option 'lookup.cache.ttl': "y" is not a duration (e.g. '10 s', '5 min')`},
	} {
		if _, err := ParseLookupOptions(c.m); err == nil || err.Error() != c.want {
			t.Errorf("%v: got %v\nwant %s", c.m, err, c.want)
		}
	}
}

// A lookup whose connection was lost is retried on a fresh one
// (lookup.max-retries, default 3); with no retries it fails, naming the
// table.
func TestLookupRetriesALostConnection(t *testing.T) {
	eachDB(t, func(t *testing.T, db *testDB) {
		tbl := dimTable(t, db)
		kill := func(f *LookupFunction) {
			id, err := f.sess.id(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if db.kind == "mysql" {
				db.exec(t, fmt.Sprintf("KILL %d", id))
			} else {
				db.query(t, "SELECT pg_terminate_backend($1)", id)
			}
		}
		f := openLookup(t, db, tbl, map[string]string{}, newFakeClock())
		look(t, f, 1)
		kill(f)
		if got := look(t, f, 1); !strings.Contains(got, "one") || f.Queries() != 3 {
			t.Errorf("after a lost connection: %q in %d queries, want the row in 3", got, f.Queries())
		}
		f = openLookup(t, db, tbl, map[string]string{"lookup.max-retries": "0"}, newFakeClock())
		look(t, f, 1)
		kill(f)
		_, err := f.Lookup(context.Background(), []any{int64(1)})
		if want := fmt.Sprintf("jdbc: table %q: ", tbl); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("no retries: got %v, want an error starting %s", err, want)
		}
	})
}
