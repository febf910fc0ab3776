package format

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/weirstream/weir/types"
)

// AvroConfluent is Flink's avro-confluent format: a message is the
// Confluent wire format — the magic byte 0, the writer's schema id (4
// bytes, big-endian) in a schema registry, then the Avro binary of one
// record. On write the table's schema (derived as the avro format derives
// it, or the 'avro-confluent.schema' given) is registered under the
// subject (Flink's default for Kafka: '<topic>-value', '<topic>-key') once,
// and its id heads every message; the registry refuses a schema that
// breaks the subject's compatibility rule (IncompatibleSchemaError). On
// read the writer's schema is fetched by its id (once per id) and resolved
// against the table's (the reader's): see avroresolve.go.
//
// An AvroConfluent is safe for concurrent use: the subtasks of a source or
// sink share it, and its registry caches.
type AvroConfluent struct {
	name    string      // avro-confluent or debezium-avro-confluent
	row     *Avro       // the table's row layout, what Encode writes
	reader  avro.Schema // the reader's (and registered) schema
	text    string      // the reader's schema as registered
	URL     string
	Subject string // where Encode registers; "" refuses to write
	cl      *sr.Client

	mu struct {
		sync.Mutex
		id      int // the registered schema's id, 0 before registration
		writers map[uint32]writerSchema
	}
}

// writerSchema is a writer's schema compiled against the table: fast reads
// it as the table's own layout, else dec resolves it; err when it does not
// resolve.
type writerSchema struct {
	fast bool
	dec  avroDecoder
	err  error
}

// registryTimeout bounds each call to the registry.
const registryTimeout = 30 * time.Second

// The avro-confluent format's options (Flink's names), after the format's
// name and a dot: 'avro-confluent.url', 'debezium-avro-confluent.url'.
const (
	optRegistryURL = "url"
	optSubject     = "subject"
	optSchema      = "schema"
	optBasicSource = "basic-auth.credentials-source"
	optBasicInfo   = "basic-auth.user-info"
	optBearerSrc   = "bearer-auth.credentials-source"
	optBearer      = "bearer-auth.token"
)

// ConfluentOptions are the options of the format name (avro-confluent or
// debezium-avro-confluent) that NewAvroConfluent reads.
func ConfluentOptions(name string) []string {
	var out []string
	for _, o := range []string{optRegistryURL, optSubject, optSchema, optBasicSource, optBasicInfo, optBearerSrc, optBearer} {
		out = append(out, name+"."+o)
	}
	return out
}

// NewAvroConfluent reads the format's options: 'avro-confluent.url'
// (required), 'avro-confluent.subject', 'avro-confluent.schema' (an Avro
// record schema of the table's shape, whose defaults and names are kept;
// by default the one derived from the table) and the registry's basic or
// bearer authentication. It does not reach the registry: Encode and Decode
// do, when they first need it.
func NewAvroConfluent(fields []types.Field, opts map[string]string) (*AvroConfluent, error) {
	return newAvroConfluent("avro-confluent", fields, opts)
}

// newAvroConfluent is NewAvroConfluent with the options and errors of the
// format name.
func newAvroConfluent(name string, fields []types.Field, opts map[string]string) (*AvroConfluent, error) {
	url := strings.TrimRight(opts[name+"."+optRegistryURL], "/")
	if url == "" {
		return nil, fmt.Errorf("format %s needs '%s.%s', the schema registry's URL (e.g. 'http://localhost:8081')", name, name, optRegistryURL)
	}
	row, err := NewAvro(fields, true)
	if err != nil {
		return nil, renamed(name, err)
	}
	a := &AvroConfluent{name: name, row: row, reader: row.schema, text: row.text, URL: url, Subject: opts[name+"."+optSubject]}
	if s := opts[name+"."+optSchema]; s != "" {
		if a.reader, err = userSchema(name, s, row.schema); err != nil {
			return nil, err
		}
		a.text = s
	}
	clOpts := []sr.ClientOpt{sr.URLs(url), sr.HTTPClient(&http.Client{Timeout: registryTimeout})}
	auth, err := registryAuth(name, opts)
	if err != nil {
		return nil, err
	}
	if a.cl, err = sr.NewClient(append(clOpts, auth...)...); err != nil {
		return nil, fmt.Errorf("format %s: '%s.%s' = '%s': %v", name, name, optRegistryURL, url, err)
	}
	a.mu.writers = map[uint32]writerSchema{}
	return a, nil
}

// registryAuth reads basic ('USER_INFO': 'user:password') or bearer
// ('STATIC_TOKEN') authentication.
func registryAuth(name string, opts map[string]string) ([]sr.ClientOpt, error) {
	var out []sr.ClientOpt
	opt := func(o string) string { return name + "." + o }
	if info := opts[opt(optBasicInfo)]; info != "" {
		if src := opts[opt(optBasicSource)]; src != "" && !strings.EqualFold(src, "USER_INFO") {
			return nil, fmt.Errorf("format %s: '%s' = '%s': only USER_INFO is supported", name, opt(optBasicSource), src)
		}
		user, pass, ok := strings.Cut(info, ":")
		if !ok {
			return nil, fmt.Errorf("format %s: '%s' must be 'user:password'", name, opt(optBasicInfo))
		}
		out = append(out, sr.BasicAuth(user, pass))
	}
	if tok := opts[opt(optBearer)]; tok != "" {
		if src := opts[opt(optBearerSrc)]; src != "" && !strings.EqualFold(src, "STATIC_TOKEN") {
			return nil, fmt.Errorf("format %s: '%s' = '%s': only STATIC_TOKEN is supported", name, opt(optBearerSrc), src)
		}
		out = append(out, sr.BearerToken(tok))
	}
	return out, nil
}

// userSchema parses the format's schema option and checks that the
// table's rows, written in the layout derived from the table, are records
// of it.
func userSchema(name, text string, derived avro.Schema) (avro.Schema, error) {
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("format %s: '%s.%s' is not an Avro schema: %v", name, name, optSchema, err)
	}
	if where := shapeDiff(s, derived, ""); where != "" {
		return nil, fmt.Errorf("format %s: '%s.%s' does not match the table's columns at %s: "+
			"Weir writes the table's rows as records of %s (any record names, field defaults and docs)", name, name, optSchema, where, derived)
	}
	return s, nil
}

// shapeDiff is where a and b differ in their binary encoding ("" where
// they do not): names, defaults and docs aside.
func shapeDiff(a, b avro.Schema, path string) string {
	if r, ok := a.(*avro.RefSchema); ok {
		a = r.Schema()
	}
	if r, ok := b.(*avro.RefSchema); ok {
		b = r.Schema()
	}
	if path == "" {
		path = "the top level"
	}
	if a.Type() != b.Type() || logicalName(a) != logicalName(b) {
		return fmt.Sprintf("%s (%s, not %s)", path, a, b)
	}
	switch x := a.(type) {
	case *avro.RecordSchema:
		y := b.(*avro.RecordSchema)
		if len(x.Fields()) != len(y.Fields()) {
			return fmt.Sprintf("%s (%d fields, not %d)", path, len(x.Fields()), len(y.Fields()))
		}
		for i, f := range x.Fields() {
			if f.Name() != y.Fields()[i].Name() {
				return fmt.Sprintf("field %d (%q, not %q)", i+1, f.Name(), y.Fields()[i].Name())
			}
			if d := shapeDiff(f.Type(), y.Fields()[i].Type(), "field "+f.Name()); d != "" {
				return d
			}
		}
	case *avro.UnionSchema:
		y := b.(*avro.UnionSchema)
		if len(x.Types()) != len(y.Types()) {
			return fmt.Sprintf("%s (%s, not %s)", path, a, b)
		}
		for i := range x.Types() {
			if d := shapeDiff(x.Types()[i], y.Types()[i], path); d != "" {
				return d
			}
		}
	case *avro.ArraySchema:
		return shapeDiff(x.Items(), b.(*avro.ArraySchema).Items(), path+"[]")
	case *avro.MapSchema:
		return shapeDiff(x.Values(), b.(*avro.MapSchema).Values(), path+"[]")
	}
	return ""
}

func logicalName(s avro.Schema) string {
	if l := logicalOf(s); l != nil {
		return l.String()
	}
	return ""
}

// Schema is the schema Encode registers, as JSON.
func (a *AvroConfluent) Schema() string { return a.text }

// confluentMagic is the first byte of the Confluent wire format.
const confluentMagic = 0

// Decode implements Format: a message not in the wire format, whose
// schema id the registry does not know, or whose writer's schema does not
// resolve to the table, is an *Error; a registry that cannot be reached is
// a *RegistryError (not the message's fault).
func (a *AvroConfluent) Decode(data []byte) ([]any, error) {
	if len(data) < 5 || data[0] != confluentMagic {
		return nil, a.wireError(data)
	}
	id := binary.BigEndian.Uint32(data[1:5])
	ws, err := a.writer(id)
	if err != nil {
		return nil, err
	}
	if ws.err != nil {
		return nil, ws.err
	}
	if ws.fast {
		row, err := a.row.Decode(data[5:])
		if err != nil {
			return nil, renamed(a.name, err)
		}
		return row, nil
	}
	r := avro.NewReader(nil, 0).Reset(data[5:])
	v, err := ws.dec(r)
	if err != nil {
		return nil, renamed(a.name, err)
	}
	if r.Peek(); r.Error == nil {
		return nil, &Error{Format: a.name, Err: fmt.Errorf("bytes are left after the record of schema id %d", id)}
	}
	return v.([]any), nil
}

func (a *AvroConfluent) wireError(data []byte) error {
	if len(data) == 0 {
		return &Error{Format: a.name, Err: fmt.Errorf("the message is empty: want the magic byte 0, a 4-byte schema id and an Avro record")}
	}
	if data[0] != confluentMagic {
		return &Error{Format: a.name, Err: fmt.Errorf("the message starts with byte 0x%02x, not the magic byte 0 of the "+
			"Confluent wire format (was it written by a schema-registry serializer?)", data[0])}
	}
	return &Error{Format: a.name, Err: fmt.Errorf("the message is %d bytes, shorter than the 5-byte header "+
		"(the magic byte 0 and the schema id)", len(data))}
}

// renamed makes err, of the avro format's code, an *Error of format name.
func renamed(name string, err error) error {
	var fe *Error
	if errors.As(err, &fe) {
		fe.Format = name
		return fe
	}
	return &Error{Format: name, Err: err}
}

// writer returns the compiled writer's schema of id, fetching it the
// first time.
func (a *AvroConfluent) writer(id uint32) (writerSchema, error) {
	a.mu.Lock()
	ws, ok := a.mu.writers[id]
	a.mu.Unlock()
	if ok {
		return ws, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	s, err := a.cl.SchemaByID(ctx, int(id))
	if err != nil {
		var re *sr.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
			return ws, &RegistryError{Format: a.name, URL: a.URL, Op: fmt.Sprintf("fetching schema id %d", id), Err: err}
		}
		// Not cached: it may be registered (by another writer) later.
		return writerSchema{err: &Error{Format: a.name, Err: fmt.Errorf(
			"schema id %d is not in the schema registry at %s (was the message written against another registry?)", id, a.URL)}}, nil
	}
	ws = a.compile(id, s)
	a.mu.Lock()
	a.mu.writers[id] = ws
	a.mu.Unlock()
	return ws, nil
}

// compile resolves the writer's schema s (of id) against the table's.
func (a *AvroConfluent) compile(id uint32, s sr.Schema) writerSchema {
	fail := func(err error) writerSchema {
		return writerSchema{err: &Error{Format: a.name, Err: fmt.Errorf("the writer's schema (id %d) %w", id, err)}}
	}
	if s.Type != sr.TypeAvro {
		return fail(fmt.Errorf("is a %s schema, not Avro", s.Type))
	}
	w, err := avro.ParseWithCache(s.Schema, "", &avro.SchemaCache{})
	if err != nil {
		return fail(fmt.Errorf("does not parse: %v", err))
	}
	if w.Fingerprint() == a.reader.Fingerprint() {
		return writerSchema{fast: true}
	}
	wr, ok := w.(*avro.RecordSchema)
	if !ok {
		return fail(fmt.Errorf("is %s, not a record", w.Type()))
	}
	rr, _ := a.reader.(*avro.RecordSchema)
	dec, err := resolveRecord(wr, rr, a.row.Fields, "")
	if err != nil {
		return fail(fmt.Errorf("does not resolve to the table's: %w", err))
	}
	return writerSchema{dec: dec}
}

// Encode implements Format: the header with the registered schema's id,
// then the row as the Avro binary of the table's schema. The first call
// registers the schema.
func (a *AvroConfluent) Encode(fields []any) ([]byte, error) {
	id, err := a.schemaID()
	if err != nil {
		return nil, err
	}
	body, err := a.row.Encode(fields)
	if err != nil {
		return nil, renamed(a.name, err)
	}
	out := make([]byte, 5, 5+len(body))
	binary.BigEndian.PutUint32(out[1:], uint32(id))
	return append(out, body...), nil
}

// schemaID registers the table's schema under the subject, once.
func (a *AvroConfluent) schemaID() (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mu.id != 0 {
		return a.mu.id, nil
	}
	if a.Subject == "" {
		return 0, fmt.Errorf("format %s: set '%[1]s.%s', the subject to register the table's schema under "+
			"(the kafka connectors default it to '<topic>-value' and '<topic>-key')", a.name, optSubject)
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	id, err := a.cl.RegisterSchema(ctx, a.Subject, sr.Schema{Schema: a.text, Type: sr.TypeAvro}, -1, -1)
	if err == nil {
		a.mu.id = id
		return id, nil
	}
	var re *sr.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusConflict {
		e := &IncompatibleSchemaError{Format: a.name, URL: a.URL, Subject: a.Subject, Schema: a.text, Reason: re.Message}
		if latest, lerr := a.cl.SchemaByVersion(ctx, a.Subject, -1); lerr == nil {
			e.Version = latest.Version
		}
		return 0, e
	}
	return 0, &RegistryError{Format: a.name, URL: a.URL, Op: fmt.Sprintf("registering the table's schema under subject %q", a.Subject), Err: err}
}

// IncompatibleSchemaError is the registry's refusal of the table's schema
// under the subject's compatibility rule.
type IncompatibleSchemaError struct {
	Format       string // avro-confluent or debezium-avro-confluent
	URL, Subject string
	Version      int    // the subject's latest version; 0 when unknown
	Schema       string // the refused schema
	Reason       string // the registry's words
}

// Error implements error.
func (e *IncompatibleSchemaError) Error() string {
	against := "the subject's registered versions"
	if e.Version > 0 {
		against = fmt.Sprintf("version %d (the latest)", e.Version)
	}
	return fmt.Sprintf("%[1]s: the schema registry at %[2]s refuses the table's schema for subject %[3]q: it is not compatible "+
		"with %[4]s under the subject's compatibility rule: %[5]s. The refused schema: %[6]s. Make the change compatible (a new column "+
		"nullable, or with a default in '%[1]s.%[7]s'; no column removed or retyped), or write to another '%[1]s.%[8]s'",
		e.Format, e.URL, e.Subject, against, e.Reason, e.Schema, optSchema, optSubject)
}

// NotRecordFault tells a connector's bad-record policy that no record is
// to blame: skipping records would not help.
func (e *IncompatibleSchemaError) NotRecordFault() {}

// RegistryError is a schema registry that could not be reached or
// answered an error: not the message's fault.
type RegistryError struct {
	Format string
	URL    string
	Op     string // what was asked
	Err    error
}

// Error implements error.
func (e *RegistryError) Error() string {
	return fmt.Sprintf("%[1]s: schema registry at %[2]s ('%[1]s.%[3]s'): %[4]s: %[5]v", e.Format, e.URL, optRegistryURL, e.Op, e.Err)
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *RegistryError) Unwrap() error { return e.Err }

// NotRecordFault: see IncompatibleSchemaError.NotRecordFault.
func (e *RegistryError) NotRecordFault() {}
