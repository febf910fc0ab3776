package mysqlcdc

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/connector/cdc"
	"github.com/weirstream/weir/types"
)

// Options configure a mysql-cdc source; the map keys of FromMap are Flink
// CDC's option names.
type Options struct {
	// Hostname and Port of the server ('hostname', 'port'; default 3306).
	Hostname string
	Port     int
	// Username and Password ('username', 'password'). The user needs
	// SELECT on the table, REPLICATION SLAVE and REPLICATION CLIENT (or
	// BINLOG MONITOR on MariaDB).
	Username, Password string
	// Database and Table ('database-name', 'table-name') name the one
	// table captured. As in Flink CDC they are regular expressions matched
	// against the whole name; they must match exactly one table.
	Database, Table string
	// ServerIDs ('server-id': "5400" or a range "5400-5404") are the
	// replica ids the readers use, one per subtask: a range must hold at
	// least the source's parallelism. Default: a random block of 64 ids
	// in 5400..6399 (as Flink CDC picks a random one).
	ServerIDs [2]uint32
	// StartupMode ('scan.startup.mode'): "initial" (default: snapshot,
	// then the binlog after it), "latest-offset" (the binlog from now
	// on) or "timestamp" (the binlog's transactions from
	// StartupTimestamp on, 'scan.startup.timestamp-millis').
	StartupMode      string
	StartupTimestamp time.Time
	// TimeZone ('server-time-zone', default UTC) is the zone a MySQL
	// TIMESTAMP column's instant is shown in when read into a SQL
	// TIMESTAMP (a TIMESTAMP_LTZ column gets the instant itself).
	TimeZone *time.Location
	// ChunkSize ('scan.incremental.snapshot.chunk.size', default 8096)
	// is the number of rows in each primary-key range split of the
	// snapshot.
	ChunkSize int
	// Fields are the table's columns as declared (names must exist in the
	// database table); PrimaryKey must be the table's primary key.
	Fields     []types.Field
	PrimaryKey []string
	// Name is the table's name in SQL, for errors ("" outside SQL).
	Name string
}

// OptionNames are the WITH options the connector reads.
var OptionNames = []string{"connector", "hostname", "port", "username", "password", "database-name", "table-name",
	"server-id", "scan.startup.mode", "scan.startup.timestamp-millis", "server-time-zone",
	"scan.incremental.snapshot.chunk.size"}

// FlinkNotYet are Flink CDC's mysql-cdc options Weir does not implement.
var FlinkNotYet = []string{"scan.incremental.snapshot.enabled", "scan.snapshot.fetch.size", "connect.timeout",
	"connect.max-retries", "connection.pool.size", "jdbc.properties", "heartbeat.interval", "scan.startup.specific-offset.file",
	"scan.startup.specific-offset.pos", "scan.startup.specific-offset.gtid-set", "scan.startup.specific-offset.skip-events",
	"scan.startup.specific-offset.skip-rows", "chunk-meta.group.size", "chunk-key.even-distribution.factor.upper-bound",
	"chunk-key.even-distribution.factor.lower-bound", "scan.newly-added-table.enabled", "scan.incremental.snapshot.chunk.key-column",
	"scan.incremental.close-idle-reader.enabled", "scan.parse.online.schema.changes.enabled", "debezium.skipped.operations"}

// OptionError is a WITH option with a bad or missing value, or a database
// that does not match it (a missing table, a binlog not in ROW format); not
// restartable.
type OptionError = cdc.OptionError

// optErr is an OptionError of the table o captures.
func (o Options) optErr(option, value, msg string, err error) error {
	return &OptionError{Connector: "mysql-cdc", Table: o.Name, Option: option, Value: value, Msg: msg, Err: err}
}

// FromMap reads Flink CDC's options. fields and pk are the table's
// declared columns and primary key; name is the table's SQL name.
func FromMap(m map[string]string, name string, fields []types.Field, pk []string) (Options, error) {
	o := Options{Hostname: m["hostname"], Username: m["username"], Password: m["password"], Database: m["database-name"],
		Table: m["table-name"], StartupMode: m["scan.startup.mode"], Fields: fields, PrimaryKey: pk, Name: name,
		Port: 3306, ChunkSize: 8096, TimeZone: time.UTC}
	bad := func(opt, msg string) error { return o.optErr(opt, m[opt], msg, nil) }
	for _, k := range []string{"hostname", "username", "database-name", "table-name"} {
		if m[k] == "" {
			return o, bad(k, "required")
		}
	}
	for _, k := range []string{"database-name", "table-name"} {
		if _, err := regexp.Compile("^(?:" + m[k] + ")$"); err != nil {
			return o, o.optErr(k, m[k], "not a regular expression", err)
		}
	}
	if v := m["port"]; v != "" {
		p, err := strconv.ParseUint(v, 10, 16)
		if err != nil || p == 0 {
			return o, bad("port", "want a port number")
		}
		o.Port = int(p)
	}
	var err error
	if o.ServerIDs, err = parseServerID(m["server-id"]); err != nil {
		return o, bad("server-id", err.Error())
	}
	if err := o.readStartup(m); err != nil {
		return o, err
	}
	if v := m["server-time-zone"]; v != "" {
		if o.TimeZone, err = time.LoadLocation(v); err != nil {
			return o, bad("server-time-zone", "not a time zone (want an IANA name such as 'Europe/Berlin', or 'UTC')")
		}
	}
	if v := m["scan.incremental.snapshot.chunk.size"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return o, bad("scan.incremental.snapshot.chunk.size", "want a number of rows, at least 1")
		}
		o.ChunkSize = n
	}
	return o, o.checkKey()
}

// readStartup reads 'scan.startup.mode' and its timestamp.
func (o *Options) readStartup(m map[string]string) error {
	ts := m["scan.startup.timestamp-millis"]
	switch o.StartupMode {
	case "":
		o.StartupMode = "initial"
	case "initial", "latest-offset":
	case "timestamp":
		ms, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || ms < 0 {
			return o.optErr("scan.startup.timestamp-millis", ts, "'scan.startup.mode' = 'timestamp' needs a time in "+
				"milliseconds since the epoch here", nil)
		}
		o.StartupTimestamp = time.UnixMilli(ms)
		return nil
	default:
		return o.optErr("scan.startup.mode", o.StartupMode, "want initial, latest-offset or timestamp "+
			"(specific-offset and earliest-offset are not supported yet)", nil)
	}
	if ts != "" {
		return o.optErr("scan.startup.timestamp-millis", ts, "only read with 'scan.startup.mode' = 'timestamp'", nil)
	}
	return nil
}

// parseServerID reads "5400" or "5400-5404"; "" is a random block.
func parseServerID(v string) ([2]uint32, error) {
	if v == "" {
		lo := 5400 + rand.Uint32N(1000-64)
		return [2]uint32{lo, lo + 63}, nil
	}
	a, b, isRange := strings.Cut(v, "-")
	lo, err1 := strconv.ParseUint(strings.TrimSpace(a), 10, 32)
	hi, err2 := lo, error(nil)
	if isRange {
		hi, err2 = strconv.ParseUint(strings.TrimSpace(b), 10, 32)
	}
	if err1 != nil || err2 != nil || lo == 0 || hi < lo {
		return [2]uint32{}, fmt.Errorf("want a replica id such as '5400' or a range such as '5400-5404' (1 to 4294967295, low-high)")
	}
	return [2]uint32{uint32(lo), uint32(hi)}, nil
}

// serverID is the replica id of subtask i of n: each subtask needs its own.
func (o Options) serverID(i, n int) (uint32, error) {
	size := int(o.ServerIDs[1]-o.ServerIDs[0]) + 1
	if n > size {
		v := fmt.Sprint(o.ServerIDs[0])
		if size > 1 {
			v = fmt.Sprintf("%d-%d", o.ServerIDs[0], o.ServerIDs[1])
		}
		return 0, o.optErr("server-id", v, fmt.Sprintf("the source runs in %d subtasks and each needs its own replica id: "+
			"give a range of at least %d ids, e.g. '%d-%d'", n, n, o.ServerIDs[0], int(o.ServerIDs[0])+n-1), nil)
	}
	return o.ServerIDs[0] + uint32(i), nil
}

// checkKey refuses a table without a declared primary key, as Flink CDC
// does: changes are matched to rows and split ranges by it.
func (o Options) checkKey() error {
	if len(o.PrimaryKey) == 0 {
		return o.optErr("PRIMARY KEY", "", fmt.Sprintf("a mysql-cdc table needs a primary key: declare the key of %s.%s "+
			"with PRIMARY KEY (...) NOT ENFORCED", o.Database, o.Table), nil)
	}
	for _, k := range o.PrimaryKey {
		i := o.column(k)
		if i < 0 {
			return o.optErr("PRIMARY KEY", "", fmt.Sprintf("column %q is not declared", k), nil)
		}
		t := o.Fields[i].Type
		if !t.IsInteger() && t.Kind != types.String && t.Kind != types.Varchar && t.Kind != types.Char {
			return o.optErr("PRIMARY KEY", "", fmt.Sprintf("key column %q is %s: mysql-cdc keys are integers or strings", k, t), nil)
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

// keyTypes are the declared types of the key columns.
func (o Options) keyTypes() []types.Type {
	var out []types.Type
	for _, i := range o.keyIndexes() {
		out = append(out, o.Fields[i].Type)
	}
	return out
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
