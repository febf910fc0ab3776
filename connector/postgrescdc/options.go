package postgrescdc

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/weirstream/weir/connector/cdc"
	"github.com/weirstream/weir/types"
)

// Options configure a postgres-cdc source; the map keys of FromMap are
// Flink CDC's option names.
type Options struct {
	// Hostname and Port of the server ('hostname', 'port'; default 5432).
	Hostname string
	Port     int
	// Username and Password ('username', 'password'). The user needs the
	// REPLICATION attribute (or superuser), SELECT on the table, and
	// CREATE on the database when the publication does not exist yet.
	Username, Password string
	// Database, Schema and Table ('database-name', 'schema-name', default
	// public, 'table-name'): the one table captured.
	Database, Schema, Table string
	// Slot is the logical replication slot ('slot.name'), created when
	// missing. Its publication is "<slot>_pub" (created when missing, FOR
	// TABLE the captured table).
	Slot string
	// StartupMode ('scan.startup.mode'): "initial" (default: snapshot,
	// then the changes after it) or "latest-offset" (changes from now on).
	StartupMode string
	// Fields are the table's columns as declared (names must exist in the
	// database table; types are Weir's). PrimaryKey names the declared
	// primary key: required, and it must be the table's.
	Fields     []types.Field
	PrimaryKey []string
	// Name is the table's name in SQL, for errors ("" outside SQL).
	Name string
}

// OptionNames are the WITH options the connector reads.
var OptionNames = []string{"connector", "hostname", "port", "username", "password", "database-name", "schema-name",
	"table-name", "slot.name", "decoding.plugin.name", "scan.startup.mode"}

// OptionError is a WITH option with a bad or missing value, or a database
// that does not match it (a missing table, a user without the REPLICATION
// attribute); not restartable.
type OptionError = cdc.OptionError

// slotName is what PostgreSQL accepts as a slot name.
var slotName = regexp.MustCompile(`^[a-z0-9_]{1,59}$`)

// FromMap reads Flink CDC's options. fields and pk are the table's
// declared columns and primary key; name is the table's SQL name.
func FromMap(m map[string]string, name string, fields []types.Field, pk []string) (Options, error) {
	o := Options{Hostname: m["hostname"], Username: m["username"], Password: m["password"], Database: m["database-name"],
		Schema: m["schema-name"], Table: m["table-name"], Slot: m["slot.name"], StartupMode: m["scan.startup.mode"],
		Fields: fields, PrimaryKey: pk, Name: name, Port: 5432}
	bad := func(opt, msg string) error {
		return &OptionError{Connector: "postgres-cdc", Table: name, Option: opt, Value: m[opt], Msg: msg}
	}
	for _, k := range []string{"hostname", "username", "database-name", "table-name", "slot.name"} {
		if m[k] == "" {
			return o, bad(k, "required")
		}
	}
	if v := m["port"]; v != "" {
		p, err := strconv.ParseUint(v, 10, 16)
		if err != nil || p == 0 {
			return o, bad("port", "want a port number")
		}
		o.Port = int(p)
	}
	if o.Schema == "" {
		o.Schema = "public"
	}
	if !slotName.MatchString(o.Slot) {
		return o, bad("slot.name", "a slot name is lower-case letters, digits and underscores (at most 59)")
	}
	if v := m["decoding.plugin.name"]; v != "" && v != "pgoutput" {
		return o, bad("decoding.plugin.name", "Weir decodes pgoutput only (built into PostgreSQL 10+)")
	}
	switch o.StartupMode {
	case "":
		o.StartupMode = "initial"
	case "initial", "latest-offset":
	default:
		return o, bad("scan.startup.mode", "want initial or latest-offset")
	}
	return o, o.checkKey()
}

// checkKey refuses a table without a declared primary key, as Flink CDC
// does: updates and deletes are matched to rows by it, and the snapshot is
// read in its order.
func (o Options) checkKey() error {
	if len(o.PrimaryKey) == 0 {
		return &OptionError{Connector: "postgres-cdc", Table: o.Name, Option: "PRIMARY KEY", Msg: fmt.Sprintf("a postgres-cdc table needs a primary key: "+
			"declare the key of %s.%s with PRIMARY KEY (...) NOT ENFORCED", o.Schema, o.Table)}
	}
	for _, k := range o.PrimaryKey {
		i := o.column(k)
		if i < 0 {
			return &OptionError{Connector: "postgres-cdc", Table: o.Name, Option: "PRIMARY KEY", Msg: fmt.Sprintf("column %q is not declared", k)}
		}
		t := o.Fields[i].Type
		if !t.IsInteger() && t.Kind != types.String && t.Kind != types.Varchar && t.Kind != types.Char && t.Kind != types.Decimal {
			return &OptionError{Connector: "postgres-cdc", Table: o.Name, Option: "PRIMARY KEY", Msg: fmt.Sprintf("key column %q is %s: "+
				"postgres-cdc keys are integers, strings or decimals", k, t)}
		}
	}
	return nil
}

// column is the index of the declared column name, or -1.
func (o Options) column(name string) int {
	return slices.IndexFunc(o.Fields, func(f types.Field) bool { return f.Name == name })
}

// keyIndexes are the positions of the primary key's columns in a row.
func (o Options) keyIndexes() []int {
	out := make([]int, len(o.PrimaryKey))
	for i, k := range o.PrimaryKey {
		out[i] = o.column(k)
	}
	return out
}

// connString is the pgx connection string; replication adds
// replication=database (the walsender protocol).
func (o Options) connString(replication bool) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(o.Username, o.Password),
		Host: fmt.Sprintf("%s:%d", o.Hostname, o.Port), Path: "/" + o.Database}
	q := url.Values{"sslmode": {"disable"}}
	if replication {
		q.Set("replication", "database")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// publication is the slot's publication.
func (o Options) publication() string { return o.Slot + "_pub" }

// qualified is the table's quoted name.
func (o Options) qualified() string { return quoteIdent(o.Schema) + "." + quoteIdent(o.Table) }

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
