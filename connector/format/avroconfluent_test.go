package format

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/types"
)

// registrySubject returns the registry's URL and a subject of the test's
// own, whose compatibility rule is BACKWARD.
func registrySubject(t *testing.T) (string, string) {
	url := testsvc.SchemaRegistry(t)
	subject := fmt.Sprintf("weir-%s-%d-value", strings.ToLower(t.Name()), time.Now().UnixNano())
	cl, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cl.SetCompatibility(context.Background(), sr.SetCompatibility{Level: sr.CompatBackward}, subject) {
		if r.Err != nil {
			t.Fatalf("setting BACKWARD on %s: %v", subject, r.Err)
		}
	}
	return url, subject
}

func newConfluent(t *testing.T, fields []types.Field, opts map[string]string) *AvroConfluent {
	t.Helper()
	a, err := NewAvroConfluent(fields, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var confluentBills = []types.Field{
	{Name: "id", Type: types.Type{Kind: types.String}},
	{Name: "amount", Type: types.Type{Kind: types.Decimal, Precision: 10, Scale: 2}},
	{Name: "ts", Type: types.Type{Kind: types.Timestamp, Precision: 3, Nullable: true}},
}

// TestAvroConfluentRoundTrip: a row written through the real registry
// carries the wire header (magic 0, the id the registry gave) and is read
// back exactly; the same schema registered again keeps its id.
func TestAvroConfluentRoundTrip(t *testing.T) {
	url, subject := registrySubject(t)
	opts := map[string]string{"avro-confluent." + optRegistryURL: url, "avro-confluent." + optSubject: subject}
	w := newConfluent(t, confluentBills, opts)
	ts := time.Date(2026, 12, 2, 7, 30, 1, 250e6, time.UTC)
	row := []any{"b-1", decimal.RequireFromString("12.50"), ts}
	msg, err := w.Encode(row)
	if err != nil {
		t.Fatal(err)
	}
	if msg[0] != 0 {
		t.Fatalf("magic byte %d", msg[0])
	}
	cl, _ := sr.NewClient(sr.URLs(url))
	latest, err := cl.SchemaByVersion(context.Background(), subject, -1)
	if err != nil {
		t.Fatal(err)
	}
	if id := binary.BigEndian.Uint32(msg[1:5]); int(id) != latest.ID || latest.Version != 1 {
		t.Fatalf("header id %d; registry: id %d version %d", id, latest.ID, latest.Version)
	}
	got, err := newConfluent(t, confluentBills, map[string]string{"avro-confluent." + optRegistryURL: url}).Decode(msg)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(row) {
		t.Fatalf("got %v, want %v", got, row)
	}
	again, err := newConfluent(t, confluentBills, opts).Encode(row)
	if err != nil || string(again) != string(msg) {
		t.Fatalf("second writer: %x, %v; want %x", again, err, msg)
	}
}

// TestAvroConfluentEvolution: version 2 of the subject adds a column with a
// default ('avro-confluent.schema'); a reader of version 2 reads version 1
// messages with the default, a reader of version 1 reads version 2
// messages without the new field, and a nullable column added by the table
// alone reads as NULL.
func TestAvroConfluentEvolution(t *testing.T) {
	url, subject := registrySubject(t)
	v1Fields := confluentBills[:2]
	v1 := newConfluent(t, v1Fields, map[string]string{"avro-confluent." + optRegistryURL: url, "avro-confluent." + optSubject: subject})
	old, err := v1.Encode([]any{"b-1", decimal.RequireFromString("1.00")})
	if err != nil {
		t.Fatal(err)
	}
	v2Fields := append(append([]types.Field(nil), v1Fields...), types.Field{Name: "currency", Type: types.Type{Kind: types.String}})
	v2Schema := `{"type":"record","name":"org.apache.flink.avro.generated.record","fields":[{"name":"id","type":"string"},` +
		`{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},` +
		`{"name":"currency","type":"string","default":"EUR"}]}`
	v2 := newConfluent(t, v2Fields, map[string]string{"avro-confluent." + optRegistryURL: url, "avro-confluent." + optSubject: subject, "avro-confluent." + optSchema: v2Schema})
	newer, err := v2.Encode([]any{"b-2", decimal.RequireFromString("2.00"), "USD"})
	if err != nil {
		t.Fatal(err)
	}
	if binary.BigEndian.Uint32(old[1:5]) == binary.BigEndian.Uint32(newer[1:5]) {
		t.Fatal("version 2 has the id of version 1")
	}
	for _, c := range []struct {
		name   string
		reader *AvroConfluent
		msg    []byte
		want   string
	}{
		{"v2 reads v1", v2, old, "[b-1 1 EUR]"},
		{"v2 reads v2", v2, newer, "[b-2 2 USD]"},
		{"v1 reads v2", v1, newer, "[b-2 2]"},
		{"nullable column reads v1", newConfluent(t, append(append([]types.Field(nil), v1Fields...),
			types.Field{Name: "note", Type: types.Type{Kind: types.String, Nullable: true}}), map[string]string{"avro-confluent." + optRegistryURL: url}),
			old, "[b-1 1 <nil>]"},
	} {
		got, err := c.reader.Decode(c.msg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s := fmt.Sprint(got); s != c.want {
			t.Fatalf("%s: got %s, want %s", c.name, s, c.want)
		}
	}
	// A reader whose new NOT NULL column has no default cannot read v1.
	noDefault := newConfluent(t, append(append([]types.Field(nil), v1Fields...),
		types.Field{Name: "currency", Type: types.Type{Kind: types.String}}), map[string]string{"avro-confluent." + optRegistryURL: url})
	if _, err := noDefault.Decode(old); err == nil || !strings.Contains(err.Error(),
		`column "currency" is not in the writer's schema and the reader's schema gives it no default`) {
		t.Fatalf("got %v", err)
	}
}

// TestAvroConfluentIncompatible: a retyped column breaks BACKWARD; the
// registry refuses it, and the error names the subject and its version.
func TestAvroConfluentIncompatible(t *testing.T) {
	url, subject := registrySubject(t)
	opts := map[string]string{"avro-confluent." + optRegistryURL: url, "avro-confluent." + optSubject: subject}
	if _, err := newConfluent(t, confluentBills, opts).Encode([]any{"b-1", decimal.RequireFromString("1"), nil}); err != nil {
		t.Fatal(err)
	}
	retyped := []types.Field{confluentBills[0], {Name: "amount", Type: types.Type{Kind: types.BigInt}}, confluentBills[2]}
	_, err := newConfluent(t, retyped, opts).Encode([]any{"b-2", int64(1), nil})
	want := fmt.Sprintf(`avro-confluent: the schema registry at %s refuses the table's schema for subject %q: `+
		`it is not compatible with version 1 (the latest) under the subject's compatibility rule: `, url, subject)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v\nwant prefix %s", err, want)
	}
	if _, ok := err.(*IncompatibleSchemaError); !ok {
		t.Fatalf("got a %T", err)
	}
}

// TestAvroConfluentBadMessages: messages not in the wire format, of an
// unknown id, or of a writer's schema that does not resolve.
func TestAvroConfluentBadMessages(t *testing.T) {
	url, subject := registrySubject(t)
	a := newConfluent(t, confluentBills, map[string]string{"avro-confluent." + optRegistryURL: url})
	cl, _ := sr.NewClient(sr.URLs(url))
	other, err := cl.RegisterSchema(context.Background(), subject,
		sr.Schema{Schema: `{"type":"record","name":"x","fields":[{"name":"id","type":"int"}]}`}, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	header := func(id int) []byte {
		b := []byte{0, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(b[1:], uint32(id))
		return b
	}
	for _, c := range []struct {
		msg  []byte
		want string
	}{
		{[]byte(`{"id":1}`), "avro-confluent: the message starts with byte 0x7b, not the magic byte 0 of the Confluent wire format"},
		{[]byte{0, 1}, "avro-confluent: the message is 2 bytes, shorter than the 5-byte header"},
		{header(1 << 30), fmt.Sprintf("avro-confluent: schema id %d is not in the schema registry at %s", 1<<30, url)},
		{append(header(other), 2), fmt.Sprintf(`avro-confluent: the writer's schema (id %d) does not resolve to the table's: `+
			`column "id" (STRING NOT NULL) cannot be read from the writer's "int"`, other)},
	} {
		_, err := a.Decode(c.msg)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%x: got %v\nwant %s", c.msg, err, c.want)
		}
	}
}

// TestAvroConfluentSchemaOption: 'avro-confluent.schema' must have the
// table's shape.
func TestAvroConfluentSchemaOption(t *testing.T) {
	_, err := NewAvroConfluent(confluentBills[:1], map[string]string{"avro-confluent." + optRegistryURL: "http://localhost:1",
		"avro-confluent." + optSchema: `{"type":"record","name":"r","fields":[{"name":"id","type":"int"}]}`})
	if want := `format avro-confluent: 'avro-confluent.schema' does not match the table's columns at field id ("int", not "string")`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v", err)
	}
	if _, err := NewAvroConfluent(confluentBills, nil); err == nil || !strings.Contains(err.Error(), "needs 'avro-confluent.url'") {
		t.Fatalf("got %v", err)
	}
}
