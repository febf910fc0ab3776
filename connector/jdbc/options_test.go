package jdbc

import (
	"bytes"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
)

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions(map[string]string{
		"connector": "jdbc", "url": "jdbc:mysql://db:3306/shop", "table-name": "orders",
		"username": "u", "password": "p", "sink.buffer-flush.max-rows": "500",
		"sink.buffer-flush.interval": "2 s", "sink.max-retries": "5",
		"sink.delivery-guarantee": "EXACTLY-ONCE", "sink.exactly-once.strategy": "xa", "sink.name": "o1",
		"sink.lock-wait-timeout": "5 s",
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.BufferFlushMaxRows != 500 || o.BufferFlushInterval != 2*time.Second || o.MaxRetries != 5 ||
		o.Guarantee != delivery.ExactlyOnce || o.Strategy != StrategyXA || o.Name != "o1" || o.Username != "u" ||
		o.LockWaitTimeout != 5*time.Second {
		t.Errorf("parsed %+v", o)
	}
	d, _ := ParseOptions(map[string]string{"url": "x", "table-name": "t"})
	if d.BufferFlushMaxRows != 100 || d.BufferFlushInterval != time.Second || d.MaxRetries != 3 ||
		d.LockWaitTimeout != DefaultLockWaitTimeout {
		t.Errorf("defaults %+v", d)
	}
	// A table that is a lookup table and a sink: the sink leaves the lookup options alone.
	if _, err := ParseOptions(map[string]string{"url": "x", "lookup.cache": "PARTIAL", "lookup.max-retries": "1"}); err != nil {
		t.Errorf("lookup options on a sink: %v", err)
	}
	_, err = ParseOptions(map[string]string{"url": "x", "scan.fetch-size": "1", "scan.auto-commit": "x", "sink.max-retries": "many"})
	if err == nil || !strings.Contains(err.Error(), "scan.auto-commit, scan.fetch-size") || !strings.Contains(err.Error(), "sink.max-retries") {
		t.Errorf("got %v, want unknown keys and the bad number named", err)
	}
	if _, err := FromMap(map[string]string{"url": "jdbc:mysql://h/db", "table-name": "t", "sink.delivery-guarantee": "maybe"}); err == nil ||
		!strings.Contains(err.Error(), "sink.delivery-guarantee") {
		t.Errorf("got %v, want the bad guarantee named", err)
	}
}

func TestParseTarget(t *testing.T) {
	cases := []struct{ url, dialect, want string }{
		{"jdbc:mysql://db:3306/shop?useSSL=false&serverTimezone=UTC&rewriteBatchedStatements=true", "MySQL",
			"u:p@tcp(db:3306)/shop?interpolateParams=true&tls=false"},
		{"jdbc:mariadb://db/shop?user=x&password=y", "MySQL", "u:p@tcp(db:3306)/shop?interpolateParams=true"},
		{"weir:weir@tcp(127.0.0.1:13306)/weir", "MySQL", "u:p@tcp(127.0.0.1:13306)/weir?interpolateParams=true"},
		{"jdbc:postgresql://db:5432/shop?currentSchema=s1&ssl=true&stringtype=unspecified", "PostgreSQL",
			"host=db port=5432 db=shop user=u search_path=s1 tls=true"},
		{"postgres://a:b@db:6543/x?sslmode=disable", "PostgreSQL", "host=db port=6543 db=x user=u search_path= tls=false"},
	}
	for _, c := range cases {
		tg, err := parseTarget(c.url, "u", "p")
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		got := ""
		if tg.mysql != nil {
			got = tg.mysql.FormatDSN()
			if tg.mysql.Loc.String() != "UTC" {
				t.Errorf("%s: loc %v", c.url, tg.mysql.Loc)
			}
		} else {
			got = "host=" + tg.pg.Host + " port=" + strconv.Itoa(int(tg.pg.Port)) + " db=" + tg.pg.Database + " user=" + tg.pg.User +
				" search_path=" + tg.pg.RuntimeParams["search_path"] + " tls=" + boolText(tg.pg.TLSConfig != nil)
			if tg.pg.Password != "p" {
				t.Errorf("%s: password %q", c.url, tg.pg.Password)
			}
		}
		if tg.dialect.name() != c.dialect || got != c.want {
			t.Errorf("%s:\n got %s %s\nwant %s %s", c.url, tg.dialect.name(), got, c.dialect, c.want)
		}
	}
	if _, err := parseTarget("jdbc:oracle:thin:@h:1521:x", "", ""); err == nil {
		t.Error("want an error for jdbc:oracle")
	}
	if r := redact("postgres://u:secret@h/db"); strings.Contains(r, "secret") {
		t.Errorf("redact left the password: %s", r)
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestXid(t *testing.T) {
	x := xid{prefix: xidPrefix("job-1", "orders"), subtask: 3, seq: 42, run: "k3x9a0"}
	if s := x.String(); s != "weir:job-1:orders:3:42:rk3x9a0" {
		t.Errorf("xid %s", s)
	}
	long := xid{prefix: xidPrefix(strings.Repeat("j", 40), "a sink with spaces"), subtask: 32767, seq: math.MaxInt64, run: "zzzzzz"}
	if n := len(long.String()); n > 64 {
		t.Errorf("xid %s is %d bytes, MySQL allows 64", long, n)
	}
	if r := newRun(); !isRun("r" + r) {
		t.Errorf("newRun() = %q", r)
	}
	w := xid{prefix: x.prefix, subtask: 1, seq: 7, wal: true}
	older := xid{prefix: x.prefix, subtask: 2, seq: 9} // an older Weir's xid, without a run
	for _, in := range []xid{x, long, w, older} {
		got, ok := parseXid(in.String())
		if !ok || got != in {
			t.Errorf("parseXid(%s) = %+v, %v", in, got, ok)
		}
	}
	for _, bad := range []string{"other:1:2", "weir:", "weir:p:x:1", "weir:p:1:-3", "weir:1:2", "weir:p:1:w2:rabcdef",
		"weir:p:1:2:rABCDEF", "weir:p:1:rabcdef", "weir:p:1:2:rabcdef:rabcdef"} {
		if x, ok := parseXid(bad); ok {
			t.Errorf("parseXid(%q) accepted: %+v", bad, x)
		}
	}
}

func TestWALCodecRoundTrip(t *testing.T) {
	ts := time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("x", 3600))
	b := walBatch{origin: 7, id: 99, rows: []event.Row{
		{Kind: event.Insert, Fields: []any{int64(-5), 2.5, true, "s", []byte{0, 1}, ts, nil}},
		{Kind: event.Delete, Fields: []any{}},
	}}
	enc, err := b.encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeWAL(enc)
	if err != nil {
		t.Fatal(err)
	}
	if got.origin != 7 || got.id != 99 || len(got.rows) != 2 || got.rows[1].Kind != event.Delete {
		t.Fatalf("decoded %+v", got)
	}
	f := got.rows[0].Fields
	if f[0] != int64(-5) || f[1] != 2.5 || f[2] != true || f[3] != "s" || !bytes.Equal(f[4].([]byte), []byte{0, 1}) ||
		!f[5].(time.Time).Equal(ts) || f[6] != nil {
		t.Errorf("fields %#v", f)
	}
	if _, err := decodeWAL(enc[:len(enc)-1]); err == nil {
		t.Error("a truncated committable decoded")
	}
}

func FuzzDecodeWAL(f *testing.F) {
	enc, _ := walBatch{origin: 1, id: 2, rows: []event.Row{{Fields: []any{int64(1), "a", nil}}}}.encode()
	f.Add(enc)
	f.Add([]byte{walMagic, walVersion, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := decodeWAL(b)
		if err != nil {
			return
		}
		again, err := w.encode()
		if err != nil {
			t.Fatalf("re-encoding a decoded batch: %v", err)
		}
		if _, err := decodeWAL(again); err != nil {
			t.Fatalf("decoding a re-encoded batch: %v", err)
		}
	})
}

type order struct {
	OrderID  int64 `jdbc:"id,key"`
	Customer string
	HTTPCode int
	Note     string `jdbc:"-"`
	internal int
}

func TestStructRows(t *testing.T) {
	var o Options
	StructRows[order]().apply(&o)
	if !reflect.DeepEqual(o.Columns, []string{"id", "customer", "http_code"}) || !reflect.DeepEqual(o.PrimaryKey, []string{"id"}) {
		t.Errorf("columns %v key %v", o.Columns, o.PrimaryKey)
	}
	r, err := o.Converter(&order{OrderID: 1, Customer: "c", HTTPCode: 200, Note: "n"})
	if err != nil || r.Kind != event.Insert || !reflect.DeepEqual(r.Fields, []any{int64(1), "c", 200}) {
		t.Errorf("row %v, %v", r, err)
	}
	if _, err := o.Converter("nope"); err == nil {
		t.Error("a string converted")
	}
	RowsOf(func(s string) event.Row { return event.Row{Kind: event.Delete, Fields: []any{s}} }).apply(&o)
	if r, err := o.Converter("k"); err != nil || r.Kind != event.Delete || r.Fields[0] != "k" {
		t.Errorf("RowsOf: %v, %v", r, err)
	}
}

// A bad row names its position when the row is known: a restart writes it
// again, and the runtime stops on the second failure there.
func TestBadRowPosition(t *testing.T) {
	row := event.Row{Kind: event.Insert, Fields: []any{int64(5), "too long"}}
	for _, c := range []struct {
		e    BadRowError
		want string
	}{
		{BadRowError{Table: "t", Key: "id=5"}, "JDBC sink table t, key id=5"},
		{BadRowError{Table: "t", Row: &row}, "JDBC sink table t, row " + row.String()},
		{BadRowError{Table: "t", batch: 3}, ""},
	} {
		if got := c.e.Position(); got != c.want {
			t.Errorf("Position() = %q, want %q", got, c.want)
		}
	}
}
