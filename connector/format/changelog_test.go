package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/types"
)

// products is the table of Flink's and Debezium's examples (the inventory
// database's products).
var products = []types.Field{
	{Name: "id", Type: tInt}, {Name: "name", Type: tString}, {Name: "description", Type: tString},
	{Name: "weight", Type: types.Type{Kind: types.Decimal, Precision: 10, Scale: 3, Nullable: true}},
}

// TestChangelogFormats runs testdata/changelog: "decode format=<name>
// [opt=<key>=<value> …]" reads each input line as one message and prints
// its rows (or its error); "encode format=<name>" writes each input row
// "<kind> <JSON array of fields>" as one message.
func TestChangelogFormats(t *testing.T) {
	datadriven.RunTest(t, "testdata/changelog", func(t *testing.T, td *datadriven.TestData) string {
		f, err := NewChangelog(td.CmdArgs[0].Vals[0], products, cmdOptions(td))
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		var out strings.Builder
		for _, line := range strings.Split(td.Input, "\n") {
			switch td.Cmd {
			case "decode":
				if line == "<empty>" {
					line = ""
				}
				rows, err := f.DecodeChanges([]byte(line))
				writeRows(&out, rows, err)
			case "encode":
				msg, err := f.EncodeChange(parseRow(t, line))
				if err != nil {
					t.Fatal(err)
				}
				out.Write(msg)
				out.WriteByte('\n')
			default:
				t.Fatalf("unknown command %s", td.Cmd)
			}
		}
		return out.String()
	})
}

func cmdOptions(td *datadriven.TestData) map[string]string {
	opts := map[string]string{}
	for _, a := range td.CmdArgs[1:] {
		for _, v := range a.Vals {
			k, val, _ := strings.Cut(v, "=")
			opts[k] = val
		}
	}
	return opts
}

func writeRows(out *strings.Builder, rows []event.Row, err error) {
	if err != nil {
		var fe *Error
		if !errors.As(err, &fe) || !errors.Is(err, ErrBadValue) {
			fmt.Fprintf(out, "error %T (not a *format.Error): %v\n", err, err)
			return
		}
		fmt.Fprintf(out, "error: %v\n", err)
		return
	}
	if len(rows) == 0 {
		out.WriteString("(no rows)\n")
	}
	var parts []string
	for _, r := range rows {
		parts = append(parts, r.String())
	}
	if len(parts) > 0 {
		out.WriteString(strings.Join(parts, " ") + "\n")
	}
}

// parseRow reads "<kind> [fields…]" with the fields as JSON values of the
// products columns.
func parseRow(t *testing.T, line string) event.Row {
	kind, fields, _ := strings.Cut(line, " ")
	kinds := map[string]event.RowKind{"+I": event.Insert, "-U": event.UpdateBefore, "+U": event.UpdateAfter, "-D": event.Delete}
	dec := json.NewDecoder(bytes.NewReader([]byte(fields)))
	dec.UseNumber()
	var vals []any
	if err := dec.Decode(&vals); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	row := event.Row{Kind: kinds[kind], Fields: make([]any, len(vals))}
	for i, v := range vals {
		var err error
		if row.Fields[i], err = TimestampSQL.fromJSON(v, products[i].Type, products[i].Name); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	return row
}

// TestChangelogRoundTrip: what each format writes, it reads back as the
// same rows, -U and -D coming back as deletes (Flink writes them so).
func TestChangelogRoundTrip(t *testing.T) {
	rows := []string{`+I [101,"scooter","Small 2-wheel scooter",3.14]`, `-U [101,"scooter",null,3.14]`,
		`+U [101,"scooter","Big",5.180]`, `-D [101,"scooter","Big",5.18]`}
	for _, name := range changelogFormats {
		f, err := NewChangelog(name, products, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range rows {
			r := parseRow(t, line)
			msg, err := f.EncodeChange(r)
			if err != nil {
				t.Fatal(err)
			}
			back, err := f.DecodeChanges(msg)
			want := r
			want.Kind = map[bool]event.RowKind{true: event.Insert, false: event.Delete}[r.Kind.IsAccumulate()]
			if err != nil || len(back) != 1 || back[0].String() != want.String() {
				t.Errorf("%s: %s → %s → %v %v, want %s", name, r, msg, back, err, want)
			}
		}
	}
}
