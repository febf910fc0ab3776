package filesystem

import (
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/types"
)

// TestPartitionPath checks Hive-style directories as Flink's
// PartitionPathUtils.generatePartitionPath builds them: escaped names and
// values, the default name for NULL and empty values.
func TestPartitionPath(t *testing.T) {
	for _, c := range []struct {
		cols   []string
		values []any
		def    string
		want   string
	}{
		{[]string{"dt", "hm"}, []any{"2024-01-01", "10:15"}, DefaultPartitionName, "dt=2024-01-01/hm=10%3A15"},
		{[]string{"dt"}, []any{nil}, DefaultPartitionName, "dt=__DEFAULT_PARTITION__"},
		{[]string{"dt"}, []any{""}, "none", "dt=none"},
		{[]string{"k"}, []any{"a/b=c d#e%f'g*h?i\\j{k[l]m^n\"o\x01p\x7fq"}, DefaultPartitionName,
			"k=a%2Fb%3Dc d%23e%25f%27g%2Ah%3Fi%5Cj%7Bk%5Bl%5Dm%5En%22o%01p%7Fq"},
		{[]string{"a=b"}, []any{int64(7)}, DefaultPartitionName, "a%3Db=7"},
		{[]string{"ts"}, []any{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}, DefaultPartitionName, "ts=2024-01-02 03%3A04%3A05"},
		{[]string{"u"}, []any{"äü-_.~!@$&()+,;"}, DefaultPartitionName, "u=äü-_.~!@$&()+,;"},
	} {
		if got := PartitionPath(c.cols, c.values, c.def); got != c.want {
			t.Errorf("PartitionPath(%q, %q) = %q, want %q", c.cols, c.values, got, c.want)
		}
	}
}

// TestPartitionValuesByType: with the columns' SQL types, directory
// values are what Flink's partition computer writes (the values' Java
// toString): a DATE without a time, a TIME, DOUBLE and FLOAT as Java
// prints them, a DECIMAL with its scale; timestamps stay SQL text.
func TestPartitionValuesByType(t *testing.T) {
	day := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    any
		t    types.Type
		want string
	}{
		{day, types.Type{Kind: types.Date}, "2024-01-02"},
		{time.Date(1970, 1, 1, 10, 15, 30, 0, time.UTC), types.Type{Kind: types.Time}, "10:15:30"},
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), types.Type{Kind: types.Timestamp, Precision: 3}, "2024-01-02 03:04:05"},
		{0.0, types.Type{Kind: types.Double}, "0.0"},
		{1e10, types.Type{Kind: types.Double}, "1.0E10"},
		{0.5, types.Type{Kind: types.Float}, "0.5"},
		{decimal.RequireFromString("1.00"), types.Type{Kind: types.Decimal, Precision: 10, Scale: 2}, "1.00"},
		{int64(-7), types.Type{Kind: types.BigInt}, "-7"},
		{true, types.Type{Kind: types.Boolean}, "true"},
		{"x", types.Type{Kind: types.String}, "x"},
	} {
		if got := partitionStrings([]any{c.v}, []types.Type{c.t}, DefaultPartitionName)[0]; got != c.want {
			t.Errorf("%s value %v: directory value %q, want %q", c.t, c.v, got, c.want)
		}
	}
}

// TestPartitionedRowsInterleaved: rows that switch partitions row by row
// (the writer remembers the last row's values and directory; values of
// several types) each land in their
// own partition's file: the committed files of each directory hold
// exactly the ids of its rows.
func TestPartitionedRowsInterleaved(t *testing.T) {
	dir := t.TempDir()
	fields := []types.Field{{Name: "id", Type: types.Type{Kind: types.BigInt}}, {Name: "dt", Type: types.Type{Kind: types.String}},
		{Name: "hm", Type: types.Type{Kind: types.String}}}
	s := &Sink{Dir: dir, Format: &format.CSV{Fields: fields[:1], Delimiter: ','},
		PartitionCols: []string{"dt", "hm"}, PartitionIdx: []int{1, 2}}
	wc := replayCtx("job-a", 0, 1, 0)
	w, err := s.CreateWriter(wc)
	if err != nil {
		t.Fatal(err)
	}
	parts := [][]any{{"2024-01-01", "10:15"}, {"2024-01-01", "10:16"}, {"2024-01-02", "10:15"}, {nil, "10:15"},
		{"2024-01-01", int64(7)}, {"2024-01-01", int64(8)}, {"2024-01-01", false}, {"2024-01-01", true}}
	want := map[string][]string{}
	rng := rand.New(rand.NewSource(1))
	for id := range 200 {
		p := parts[rng.Intn(len(parts))]
		if id%3 == 0 {
			p = parts[id%len(parts)]
		}
		writeRows(t, w, event.Row{Kind: event.Insert, Fields: []any{int64(id), p[0], p[1]}})
		rel := PartitionPath(s.PartitionCols, p, DefaultPartitionName)
		want[rel] = append(want[rel], strconv.Itoa(id))
	}
	checkpoint(t, s, wc, w, 1)
	got := map[string][]string{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, ".weir-committed") {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, filepath.Dir(p))
		got[rel] = append(got[rel], strings.Fields(string(b))...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range got {
		slices.Sort(got[rel])
		slices.Sort(want[rel])
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ids by partition directory:\n%v\nwant\n%v", got, want)
	}
}
