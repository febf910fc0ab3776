package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/types"
)

// The fast decoders must give exactly what the encoding/json and
// encoding/csv paths give: the same row (decimals with the same scale,
// times with the same location) or the same error. These targets compare
// the two on every message; their seeds are the other targets' seeds and
// the messages below, chosen to sit on the fast path's edges. Run one
// with
//
//	go test -run '^$' -fuzz '^FuzzJSONFastPath$' -fuzztime 5m -parallel 1 ./connector/format/

// fastPathEdges are JSON messages at the edges of the fast path: each
// must decode as encoding/json reads it.
var fastPathEdges = []string{
	``, ` `, `null`, `[]`, `{}`, `{"s":"a"} trailing`, `{"s":"a"`, `{"s":"a",}`, `{"s" :"a" , "s":"b"}`,
	`{"s":"\u00e9\n"}`, `{"s":"\ud800"}`, "{\"s\":\"\xff\"}", "{\"\xffs\":1}", `{"\u0073":"x"}`,
	`{"i":01}`, `{"i":-0}`, `{"i":1.}`, `{"i":.5}`, `{"i":1e}`, `{"i":2147483648}`, `{"i":-2147483648}`,
	`{"bi":123456789012345678}`, `{"bi":1234567890123456789}`, `{"bi":"-9223372036854775808"}`,
	`{"ti":"127"}`, `{"ti":"128"}`, `{"ti":" 1"}`, `{"ti":"+1"}`, `{"b":"true"}`, `{"b":"TRUE"}`, `{"b":1}`,
	`{"dec":0}`, `{"dec":"0.000"}`, `{"dec":-0.005}`, `{"dec":"12345678.995"}`, `{"dec":99999999.995}`,
	`{"dec":"007.50"}`, `{"dec":123456789012345678}`, `{"dec":"1234567890123456789"}`, `{"dec":"-"}`, `{"dec":"1."}`,
	`{"ts":"2026-02-29 00:00:00"}`, `{"ts":"2024-02-29 23:59:59.999999999"}`, `{"ts":"2026-11-31 00:00:00"}`,
	`{"ts":"2026-11-30 24:00:00"}`, `{"ts":"2026-11-30 08:00:60"}`, `{"ts":"2026-11-30 08:00:00.1234567891"}`,
	`{"ts":"2026-11-30T08:00:00.5Z"}`, `{"ts":"2026-11-30 08:00Z"}`, `{"ts":"2026-11-30 08:00:00."}`,
	`{"ts":"0000-01-01 00:00:00"}`, `{"ltz":"2026-11-30 08:00:00.123Z"}`, `{"ts":"2026-13-01 00:00:00"}`,
	`{"d":1e400}`, `{"f":3.5e38}`, `{"f":-0}`, `{"d":-0.0}`, `{"s":12.50}`, `{"s":true}`, `{"s":{"a":1}}`,
	`{"row":{"x":1,"x":"2","y":null}}`, `{"arr":[1,2.5]}`, `{"m":{"k":"1","":2}}`, `{"row":[1]}`,
	`{"by":"AAEC/w=="}`, `{"by":"x"}`, `{"by":null,"s":null}`, `{"zz":[[[[{"a":[1,{"b":"\t"}]}]]]],"s":"a"}`,
	`{"zz":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `,"i":1}`,
}

func FuzzJSONFastPath(f *testing.F) {
	addSeeds(f, "FuzzJSONDecode", fastPathEdges)
	plain, strict := &JSON{Fields: fuzzJSONSchema}, &JSON{Fields: fuzzScalars, FailOnMissingField: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, j := range []*JSON{plain, strict} {
			got, err := j.Decode(data)
			want, werr := j.decodeSlow(data)
			sameResult(t, data, got, err, want, werr)
		}
	})
}

// sameResult fails unless both decodes gave the same error text, or
// identical rows.
func sameResult(t *testing.T, data []byte, got any, err error, want any, werr error) {
	t.Helper()
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("%q: fast path gives %v, %v; slow path %v, %v", data, got, err, want, werr)
	}
	if err == nil && !identical(got, want) {
		t.Fatalf("%q: fast path gives %#v; slow path %#v", data, got, want)
	}
}

// addSeeds adds the seeds stored for target (one []byte each) and extra.
func addSeeds(f *testing.F, target string, extra []string) {
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if q, ok := strings.CutPrefix(line, "[]byte("); ok {
				s, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
				if err != nil {
					f.Fatalf("%s: %v", name, err)
				}
				f.Add([]byte(s))
			}
		}
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// changelogEdges are changelog messages at the edges of the fast path,
// each for the format changelogCases[k].
var changelogEdges = []struct {
	k   uint8
	msg string
}{
	{0, `{"before":{"i":1,"s":"a"},"after":{"i":2,"s":"b","dec":"1.50"},"op":"u"}`},
	{0, `{"before":null,"after":{"i":2},"op":"c"}`}, {0, `{"before":null,"after":{"i":2},"op":"u"}`},
	{0, `{"after":{"i":"x"},"op":"r"}`}, {0, `{"before":{"i":1},"op":"d","op":"x"}`}, {0, `{"op":"\u0063","after":{}}`},
	{0, `{"op":"c","after":[]}`}, {0, `{"op":1}`}, {0, `null`}, {0, ` `}, {0, `{"schema":{},"payload":{"op":"c","after":{"i":1}}}`},
	{1, `{"schema":{},"payload":{"op":"c","after":{"i":1}}}`}, {1, `{"payload":null}`}, {1, `{"payload":{"op":"d","before":{"s":"z"}}}`},
	{2, `{"data":[{"i":"1","ts":"2026-11-30 08:00:00"}],"old":[{"i":"0"}],"type":"UPDATE"}`},
	{2, `{"data":[],"old":[],"type":"UPDATE"}`}, {2, `{"data":[],"type":"UPDATE"}`}, {2, `{"data":[{}],"old":[],"type":"UPDATE"}`},
	{2, `{"data":[{}],"old":[{},{}],"type":"UPDATE"}`}, {2, `{"data":[{"i":1},null],"type":"INSERT"}`},
	{2, `{"data":[{"i":1},{"i":2}],"type":"DELETE"}`}, {2, `{"type":"CREATE","isDdl":true}`}, {2, `{"data":{},"type":"INSERT"}`},
	{2, `{"data":[{"i":1}],"old":[null],"type":"UPDATE"}`}, {2, `{"data":[{"i":1}],"old":[{"i":null}],"type":"UPDATE"}`},
	{3, `{"data":[{"i":1}],"database":"shop","table":"bills","type":"INSERT"}`},
	{3, `{"data":[{"i":1}],"database":"shop","table":"other","type":"INSERT"}`},
	{3, `{"data":"x","database":"sh\u006fp","table":"bills","type":"INSERT"}`}, {3, `{"database":1,"type":"INSERT"}`},
	{4, `{"data":{"i":1,"arr":[1,2]},"old":{"arr":null},"type":"update"}`}, {4, `{"data":{"i":1},"type":"update"}`},
	{4, `{"data":{"i":1},"old":[],"type":"update"}`}, {4, `{"data":null,"type":"insert"}`}, {4, `{"data":{"i":1},"type":"delete"}`},
	{4, `{"data":{"i":1},"old":{"zz":1,"s":"\n"},"type":"update"}`}, {4, `{"type":"insert"}`},
}

// changelogCases are the formats the changelog fast-path target runs.
var changelogCases = []struct {
	name string
	opts map[string]string
}{
	{"debezium-json", nil}, {"debezium-json", map[string]string{"debezium-json.schema-include": "true"}},
	{"canal-json", nil}, {"canal-json", map[string]string{"canal-json.database.include": "shop", "canal-json.table.include": "bill.*"}},
	{"maxwell-json", nil},
}

func FuzzChangelogFastPath(f *testing.F) {
	for _, e := range changelogEdges {
		f.Add(e.k, []byte(e.msg))
	}
	slow := map[string]func(Changelog, []byte) ([]event.Row, error){
		"debezium-json": func(c Changelog, b []byte) ([]event.Row, error) { return c.(*Debezium).decodeSlow(b) },
		"canal-json":    func(c Changelog, b []byte) ([]event.Row, error) { return c.(*Canal).decodeSlow(b) },
		"maxwell-json":  func(c Changelog, b []byte) ([]event.Row, error) { return c.(*Maxwell).decodeSlow(b) },
	}
	f.Fuzz(func(t *testing.T, k uint8, data []byte) {
		cs := changelogCases[int(k)%len(changelogCases)]
		c, err := NewChangelog(cs.name, fuzzJSONSchema, cs.opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.DecodeChanges(data)
		want, werr := slow[cs.name](c, data)
		sameResult(t, data, rowsOf(got), err, rowsOf(want), werr)
	})
}

// rowsOf writes rows as values identical compares: each row's kind
// followed by its fields.
func rowsOf(rows []event.Row) []any {
	if rows == nil {
		return nil
	}
	out := make([]any, 0, len(rows))
	for _, r := range rows {
		out = append(out, append([]any{r.Kind.String()}, r.Fields...))
	}
	return out
}

// TestAppendersMatch checks each appending writer against the string
// function it stands for, on edge values and seeded random ones.
func TestAppendersMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 4))
	decs := []decimal.Decimal{decimal.Zero, decimal.New(0, -3), decimal.New(100, 0), decimal.New(1, 2), decimal.New(-1, -7),
		decimal.New(12345, -7), decimal.New(-123456789012345678, -20), decimal.New(999999999999999999, 5),
		decimal.RequireFromString("1234567890123456789.5"), decimal.New(50, -1), decimal.New(-10, -1), decimal.New(7, -6)}
	for range 2000 {
		decs = append(decs, decimal.New(rng.Int64N(1e18)-5e17>>uint(rng.IntN(60)), int32(rng.IntN(30)-20)))
	}
	for _, d := range decs {
		for _, plain := range []bool{false, true} {
			if got, want := string(appendNumber([]byte("x"), d, plain)), "x"+formatNumber(d, plain); got != want {
				t.Errorf("appendNumber(%s, %v) = %q, want %q", d, plain, got, want)
			}
		}
	}
	times := []time.Time{{}, time.Date(2026, 11, 30, 8, 0, 1, 250e6, time.UTC), time.Date(-5, 1, 2, 3, 4, 5, 1, time.UTC),
		time.Date(12026, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))}
	for range 2000 {
		times = append(times, time.Unix(rng.Int64N(1e11)-3e10, rng.Int64N(1e9)>>uint(rng.IntN(30))))
	}
	for _, x := range times {
		for _, k := range []types.Kind{types.Timestamp, types.TimestampLTZ, types.Date, types.Time, types.String} {
			ty := types.Type{Kind: k}
			s, ok := formatTime(x, ty)
			got, gotOK := appendTimeText([]byte("x"), x, ty)
			if string(got) != "x"+s || gotOK != ok {
				t.Errorf("appendTimeText(%v, %s) = %q %v, want %q %v", x, k, got, gotOK, s, ok)
			}
		}
	}
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "<&>", "tab\t", "é", "\xff", "\u2028", "\x7f"} {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %q, want %q", s, got, want)
		}
	}
}

// csvEdges are CSV lines at the edges of the fast path (13 columns:
// fuzzScalars).
var csvEdges = []string{
	``, `,,,,,,,,,,,,`, `,,,,,,,,,,,`, `,,,,,,,,,,,,,`, "1,2,3,4,5,6,7,true,2026-01-02,2026-01-02 03:04:05,,,x\n",
	`1,2,3,4,5,6,7,true,2026-01-02,2026-01-02 03:04:05,,,"x"`, `300,x,1.5,,NaN,1e3, 1.5,TRUE,2026-02-30,2026-02-30 00:00:00,,A===,`,
	" 1,+2,-3,0004,.5,5.,-0.00,false,,2026-01-02T03:04:05.123Z,2026-01-02 03:04:05.5Z,AAEC/w==, lead space",
	"1,2,3,4,5,6,7,true,2026-01-02,2026-01-02 03:04:05,,,a\rb", `1;2;3;4;5;6;7;true;;;;;`,
	// Fields of 32 bytes or more are scanned for quoting another way.
	`1,2,3,4,5,6,7,true,2026-01-02,2026-01-02 03:04:05,,,"a long field, with the delimiter in it, past 32 bytes"`,
	`1,2,3,4,5,6,7,true,2026-01-02,2026-01-02 03:04:05,,,"a long field with a ""quote"" in it and well past 32 bytes"`,
	"1,2,3,4,5,6,7,true,2026-01-02,2026-01-02 03:04:05,,,\"a long field with a line\nbreak in it and past 32 bytes\"",
	"1,2,3,4,5,6,7,true,2026-01-02,2026-01-02 03:04:05,,,\"a long field with a carriage\rreturn in it and past 32 bytes\"",
	"1,2,3,4,5,6,7,true,2026-01-02,2026-01-02 03:04:05,,,a long plain field with nothing to quote in it at all",
}

func FuzzCSVFastPath(f *testing.F) {
	addSeeds(f, "FuzzCSVDecode", csvEdges)
	cases := []*CSV{{Fields: fuzzScalars, Delimiter: ','}, {Fields: fuzzScalars, Delimiter: ',', IgnoreParseErrors: true},
		{Fields: fuzzScalars, Delimiter: ';', PlainDecimals: true}, {Fields: fuzzScalars, Delimiter: '1'}, {Fields: fuzzScalars, Delimiter: 'é'}}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range cases {
			got, err := c.Decode(data)
			want, werr := c.decodeSlow(data)
			sameResult(t, data, got, err, want, werr)
			if err != nil {
				continue
			}
			enc, err := c.Encode(got)
			wantEnc, werr := c.encodeSlow(got)
			if string(enc) != string(wantEnc) || (err == nil) != (werr == nil) {
				t.Fatalf("%q: %v encodes as %q (%v), encoding/csv writes %q (%v)", data, got, enc, err, wantEnc, werr)
			}
		}
	})
}

// TestCSVIntegersWithNumberDelimiter: integers go unquoted only while the
// delimiter cannot appear in them; with a digit or '-' as the delimiter
// they are quoted as encoding/csv quotes them.
func TestCSVIntegersWithNumberDelimiter(t *testing.T) {
	fields := []types.Field{{Name: "a", Type: types.Type{Kind: types.BigInt}}, {Name: "b", Type: types.Type{Kind: types.BigInt}}}
	for _, d := range []rune{',', '1', '-', '7'} {
		c := &CSV{Fields: fields, Delimiter: d}
		for _, row := range [][]any{{int64(1), int64(-21)}, {int64(-7), int64(170)}, {int64(0), int64(23)}} {
			got, err := c.Encode(row)
			want, werr := c.encodeSlow(row)
			if string(got) != string(want) || err != nil || werr != nil {
				t.Errorf("delimiter %q: %v encodes as %q (%v), encoding/csv writes %q (%v)", d, row, got, err, want, werr)
			}
		}
	}
}
