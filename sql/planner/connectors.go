package planner

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/connector/blackhole"
	"github.com/weirstream/weir/connector/datagen"
	"github.com/weirstream/weir/connector/filesystem"
	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/connector/nexmark"
	"github.com/weirstream/weir/connector/parquet"
	"github.com/weirstream/weir/connector/print"
	"github.com/weirstream/weir/duration"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// SinkSpec is what a sink factory returns: the sink and what it accepts.
type SinkSpec struct {
	Sink operator.Sink
	// AcceptsUpdates: the sink takes -U/+U/-D rows (an upsert or retract
	// sink). Otherwise it takes +I only.
	AcceptsUpdates bool
	// NeedsKey: updates are applied by the table's PRIMARY KEY.
	NeedsKey bool
}

// SourceFactory builds a source emitting event.Row{+I} values with the
// table's physical columns, in order, then the value of each metadata
// column (as its key's type: see MetadataFactory), in order.
type SourceFactory func(t *catalog.Table) (operator.Source, error)

// SinkFactory builds a sink taking event.Row values with the table's
// physical columns, then the value of each metadata column an INSERT
// writes (Table.WrittenMetadata, as its key's type).
type SinkFactory func(t *catalog.Table) (SinkSpec, error)

// LookupFactory returns the loader of a table that lookup joins read
// (JOIN t FOR SYSTEM_TIME AS OF …): it returns every row of the table's
// physical columns, and is called once per join subtask when it opens.
type LookupFactory func(t *catalog.Table) (func() ([][]any, error), error)

// KeyLookupFactory returns the per-key lookup of a table that lookup joins
// query row by row (Flink's LookupTableSource): keys index the table's
// physical columns, the lookup's key values come in that order, and each
// row it returns has the physical columns. The function is called once per
// join subtask when it opens.
type KeyLookupFactory func(t *catalog.Table, keys []int) (func() (exec.LookupFunc, error), error)

// Connectors maps 'connector' option values to factories.
type Connectors struct {
	Sources map[string]SourceFactory
	Sinks   map[string]SinkFactory
	// Lookups are the connectors whose tables a lookup join can read.
	Lookups map[string]LookupFactory
	// KeyLookups are the connectors whose tables a lookup join queries by
	// key (jdbc); a connector in both maps is queried by key.
	KeyLookups map[string]KeyLookupFactory
	// Updating names the connectors whose sources emit a changelog
	// (upsert-kafka) rather than inserts only.
	Updating map[string]bool
	// Metadata lists the metadata keys of a connector's tables; a
	// connector without an entry has none.
	Metadata map[string]MetadataFactory
	// UpdatingWhen names connectors whose tables emit a changelog when
	// the function says so, by the table's options (Flink's test
	// connector 'values' with its 'changelog-mode').
	UpdatingWhen map[string]func(t *catalog.Table) bool
}

// BuiltinConnectors returns the connectors that need no external system:
// datagen, print, blackhole and filesystem. Kafka and JDBC are added by
// RegisterExternal.
func BuiltinConnectors() *Connectors {
	c := &Connectors{Sources: map[string]SourceFactory{}, Sinks: map[string]SinkFactory{}, Updating: map[string]bool{},
		Metadata: map[string]MetadataFactory{}}
	c.Sources["datagen"] = func(t *catalog.Table) (operator.Source, error) {
		s, err := datagen.FromOptions(t.Physical(), t.Options)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	c.Sinks["print"] = func(t *catalog.Table) (SinkSpec, error) {
		s, err := print.FromOptions(t.Options)
		if err != nil {
			return SinkSpec{}, err
		}
		s.Types = types.FieldTypes(t.Physical())
		return SinkSpec{Sink: s, AcceptsUpdates: true}, nil
	}
	c.Sinks["blackhole"] = func(t *catalog.Table) (SinkSpec, error) {
		return SinkSpec{Sink: &blackhole.Sink{}, AcceptsUpdates: true}, nil
	}
	c.Sources["nexmark"] = func(t *catalog.Table) (operator.Source, error) {
		src, err := nexmark.FromOptions(t.Options)
		if err != nil {
			return nil, fmt.Errorf("table %q: %w", t.Name, err)
		}
		return src.Rows(), nil
	}
	c.Sources["filesystem"] = fileSource
	c.Sinks["filesystem"] = fileSink
	c.Lookups = map[string]LookupFactory{"filesystem": fileLookup}
	c.KeyLookups = map[string]KeyLookupFactory{}
	return c
}

// fileFormats is a filesystem table's format — a row format, a changelog
// format (debezium-json, …) or a bulk format (parquet) — and its path.
type fileFormats struct {
	row       format.Format
	changelog format.Changelog
	bulk      filesystem.BulkFormat
	path      string
}

// fileFormat returns the table's format and its path.
func fileFormat(t *catalog.Table) (fileFormats, error) {
	path := strings.TrimPrefix(t.Options["path"], "file://")
	if path == "" {
		return fileFormats{}, fmt.Errorf("table %q: the filesystem connector needs a 'path' option", t.Name)
	}
	ff := fileFormats{path: path}
	if strings.EqualFold(t.Options["format"], "avro") {
		return ff, &Error{Pos: t.OptionAt("format"), Msg: fmt.Sprintf("table %q: the filesystem connector reads and "+
			"writes lines (csv, json, the changelog formats) and parquet files; Avro container files are not supported yet", t.Name),
			Hint: "use 'format' = 'avro' with the kafka or upsert-kafka connector, or csv/json/parquet files"}
	}
	if f := strings.ToLower(t.Options["format"]); strings.HasSuffix(f, "avro-confluent") {
		return ff, &Error{Pos: t.OptionAt("format"), Msg: fmt.Sprintf("table %q: '%s' is a format of "+
			"messages (a schema id, then a record), not of files", t.Name, f),
			Hint: fmt.Sprintf("use 'format' = '%s' with the kafka connector, or csv/json/parquet files", f)}
	}
	if strings.EqualFold(t.Options["format"], "parquet") {
		b, err := parquet.FromOptions(t.Physical(), t.Options)
		if err != nil {
			return ff, parquetErr(t, err)
		}
		ff.bulk = b
		return ff, nil
	}
	var err error
	if name := t.Options["format"]; format.IsChangelog(name) {
		ff.changelog, err = format.NewChangelog(name, t.Physical(), t.Options)
		return ff, tableErr(t, err)
	}
	if ff.row, err = format.New(t.Options["format"], t.Physical(), t.Options); err != nil {
		return ff, fmt.Errorf("table %q: %w", t.Name, err)
	}
	return ff, nil
}

// parquetErr places an error of the parquet format at its option.
func parquetErr(t *catalog.Table, err error) error {
	var oe *parquet.OptionError
	if errors.As(err, &oe) {
		return &Error{Pos: t.OptionAt(oe.Option), Msg: fmt.Sprintf("table %q: '%s' = '%s': %s", t.Name, oe.Option, oe.Value, oe.Msg),
			Hint: oe.Hint, Err: err}
	}
	return &Error{Pos: t.OptionAt("format"), Msg: fmt.Sprintf("table %q: %v", t.Name, err), Err: err}
}

func fileSource(t *catalog.Table) (operator.Source, error) {
	data, cols, order := t, []string(nil), []int(nil)
	if len(t.PartitionedBy) > 0 {
		var err error
		if data, cols, order, err = partitionedData(t); err != nil {
			return nil, err
		}
	}
	ff, err := fileFormat(data)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(ff.path); err != nil {
		return nil, &Error{Pos: t.OptionAt("path"), Msg: fmt.Sprintf("table %q: 'path' = '%s': %v", t.Name, t.Options["path"], unwrapPath(err)),
			Hint: "check the path (relative paths are relative to the directory weir runs in)", Err: err}
	}
	src := &filesystem.Source{Path: ff.path, Format: ff.row, Changelog: ff.changelog, Bulk: ff.bulk, BadLineFix: fmt.Sprintf("set '%s.ignore-parse-errors' = 'true' on table %q",
		t.Options["format"], t.Name), PartitionCols: cols, PartitionIdx: order}
	if len(cols) > 0 {
		src.ParsePartition = partitionParser(t, order)
	}
	skip, err := format.IgnoreParseErrors(t.Options["format"], t.Options)
	if err != nil {
		return nil, tableErr(t, err)
	}
	if skip {
		// 'json.ignore-parse-errors' / 'csv.ignore-parse-errors': a line
		// that does not parse is skipped, as Flink's formats skip it.
		src.OnBadLine = func(string, int64, error) error { return nil }
	}
	return src, nil
}

func fileSink(t *catalog.Table) (SinkSpec, error) {
	rolling, err := rollingPolicy(t)
	if err != nil {
		return SinkSpec{}, err
	}
	replay, err := allowReplay(t)
	if err != nil {
		return SinkSpec{}, err
	}
	if len(t.PartitionedBy) == 0 {
		ff, err := fileFormat(t)
		return SinkSpec{Sink: &filesystem.Sink{Dir: ff.path, Format: ff.row, Changelog: ff.changelog, Bulk: ff.bulk, Rolling: rolling,
			Name: t.Name, AllowReplay: replay}, AcceptsUpdates: ff.changelog != nil}, err
	}
	data, cols, order, err := partitionedData(t)
	if err != nil {
		return SinkSpec{}, err
	}
	ff, err := fileFormat(data)
	if err != nil {
		return SinkSpec{}, err
	}
	if ff.changelog != nil {
		return SinkSpec{}, &Error{Pos: t.OptionAt("format"), Msg: fmt.Sprintf("table %q: a PARTITIONED BY filesystem table "+
			"takes insert-only rows; '%s' is a changelog format", t.Name, t.Options["format"]),
			Hint: "use 'format' = 'csv', 'json' or 'parquet', or drop PARTITIONED BY"}
	}
	commit, err := partitionCommit(t)
	if err != nil {
		return SinkSpec{}, err
	}
	phys := t.Physical()
	ptypes := make([]types.Type, len(order))
	for i, j := range order {
		ptypes[i] = phys[j].Type
	}
	return SinkSpec{Sink: &filesystem.Sink{Dir: ff.path, Format: ff.row, Bulk: ff.bulk, PartitionCols: cols, PartitionIdx: order, PartitionTypes: ptypes,
		DefaultPartition: t.Options["partition.default-name"], Commit: commit, Rolling: rolling, Name: t.Name, AllowReplay: replay}}, nil
}

// allowReplay reads a filesystem table's 'sink.allow-replay' (Weir's, as
// the JDBC and Kafka sinks'): accept a restore older than the sink's
// committed output.
func allowReplay(t *catalog.Table) (bool, error) {
	v, ok := t.Options["sink.allow-replay"]
	if !ok {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &Error{Pos: t.OptionAt("sink.allow-replay"), Msg: fmt.Sprintf("table %q: 'sink.allow-replay' = '%s': want true or false", t.Name, v)}
}

// partitionParser reads a partition directory's value into its column's
// type; the default partition name is NULL.
func partitionParser(t *catalog.Table, order []int) func(int, string) (any, error) {
	def := t.Options["partition.default-name"]
	if def == "" {
		def = filesystem.DefaultPartitionName
	}
	phys := t.Physical()
	return func(i int, v string) (any, error) {
		if v == def {
			return nil, nil
		}
		return format.ParseScalar(v, phys[order[i]].Type)
	}
}

// partitionedData is a PARTITIONED BY table's data columns: the partition
// columns name the directories and are not in the files, so the format
// sees the table without them. cols are the partition columns in
// PARTITIONED BY's order, order their indexes among the physical columns.
func partitionedData(t *catalog.Table) (data *catalog.Table, cols []string, order []int, err error) {
	d := *t
	d.Columns = nil
	found := 0
	for _, col := range t.Columns {
		if col.Kind == parser.PhysicalColumn && slices.Contains(t.PartitionedBy, col.Name) {
			found++
			continue
		}
		d.Columns = append(d.Columns, col)
	}
	if found != len(t.PartitionedBy) {
		return nil, nil, nil, &Error{Pos: t.Pos, Msg: fmt.Sprintf("table %q: PARTITIONED BY (%s) must name physical columns",
			t.Name, strings.Join(t.PartitionedBy, ", "))}
	}
	cols = slices.Clone(t.PartitionedBy)
	order = make([]int, len(cols))
	for i, name := range cols {
		order[i] = slices.IndexFunc(t.Physical(), func(f types.Field) bool { return f.Name == name })
	}
	return &d, cols, order, nil
}

// rollingPolicy reads 'sink.rolling-policy.*' with Flink's defaults (128MB,
// 30 min, 1 min, 30 min).
func rollingPolicy(t *catalog.Table) (filesystem.RollingPolicy, error) {
	p := filesystem.RollingPolicy{FileSize: 128 << 20, RolloverInterval: 30 * time.Minute, CheckInterval: time.Minute,
		InactivityInterval: 30 * time.Minute}
	for key, d := range map[string]*time.Duration{"sink.rolling-policy.rollover-interval": &p.RolloverInterval,
		"sink.rolling-policy.check-interval": &p.CheckInterval, "sink.rolling-policy.inactivity-interval": &p.InactivityInterval} {
		if v, ok := t.Options[key]; ok {
			x, err := duration.Parse(v)
			if err != nil || x <= 0 {
				return p, &Error{Pos: t.OptionAt(key), Msg: fmt.Sprintf("table %q: '%s' = '%s': want a positive duration", t.Name, key, v),
					Hint: "e.g. '1 min' or '30 s'"}
			}
			*d = x
		}
	}
	if v, ok := t.Options["sink.rolling-policy.file-size"]; ok {
		n, err := parseMemorySize(v)
		if err != nil || n <= 0 {
			return p, &Error{Pos: t.OptionAt("sink.rolling-policy.file-size"), Msg: fmt.Sprintf("table %q: "+
				"'sink.rolling-policy.file-size' = '%s': want a size", t.Name, v), Hint: "e.g. '128MB', '1 gb' or '512kb'"}
		}
		p.FileSize = n
	}
	return p, nil
}

// parseMemorySize reads Flink's MemorySize ("128MB", "1 gb", "512", a bare
// number of bytes).
func parseMemorySize(s string) (int64, error) {
	v := strings.ToLower(strings.ReplaceAll(s, " ", ""))
	i := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if i == 0 {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	num, unit := v, ""
	if i > 0 {
		num, unit = v[:i], v[i:]
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, err
	}
	units := map[string]int64{"": 1, "b": 1, "bytes": 1, "k": 1 << 10, "kb": 1 << 10, "kibibytes": 1 << 10, "m": 1 << 20,
		"mb": 1 << 20, "mebibytes": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gibibytes": 1 << 30, "t": 1 << 40, "tb": 1 << 40}
	u, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("%q has an unknown unit %q", s, unit)
	}
	return n * u, nil
}

// partitionCommit reads Flink's partition commit options; nil without
// 'sink.partition-commit.policy.kind' (Flink then commits no partition).
func partitionCommit(t *catalog.Table) (*filesystem.CommitPolicy, error) {
	bad := func(key, msg, hint string) error {
		return &Error{Pos: t.OptionAt(key), Msg: fmt.Sprintf("table %q: '%s' = '%s': %s", t.Name, key, t.Options[key], msg), Hint: hint}
	}
	c := &filesystem.CommitPolicy{Trigger: filesystem.TriggerProcessTime, SuccessFile: "_SUCCESS", Zone: time.UTC,
		Extractor: &filesystem.TimeExtractor{Cols: t.PartitionedBy}}
	if v, ok := t.Options["sink.partition-commit.trigger"]; ok {
		if v != filesystem.TriggerProcessTime && v != filesystem.TriggerPartitionTime {
			return nil, bad("sink.partition-commit.trigger", "unknown trigger", "use 'process-time' or 'partition-time'")
		}
		c.Trigger = v
	}
	if v, ok := t.Options["sink.partition-commit.delay"]; ok {
		d, err := duration.Parse(v)
		if err != nil || d < 0 {
			return nil, bad("sink.partition-commit.delay", "want a duration", "e.g. '1 min', '1 h', '0 s'")
		}
		c.Delay = d
	}
	if v, ok := t.Options["sink.partition-commit.watermark-time-zone"]; ok {
		z, err := time.LoadLocation(v)
		if err != nil {
			return nil, bad("sink.partition-commit.watermark-time-zone", "unknown time zone", "e.g. 'UTC' or 'Asia/Shanghai'")
		}
		c.Zone = z
	}
	if v, ok := t.Options["sink.partition-commit.success-file.name"]; ok {
		if v == "" || strings.ContainsAny(v, "/\\") {
			return nil, bad("sink.partition-commit.success-file.name", "want a file name", "the default is '_SUCCESS'")
		}
		c.SuccessFile = v
	}
	if v, ok := t.Options["partition.time-extractor.kind"]; ok && v != "default" {
		return nil, bad("partition.time-extractor.kind", "only the 'default' extractor is supported", "drop the option or use 'default'")
	}
	if v, ok := t.Options["partition.time-extractor.timestamp-pattern"]; ok {
		if err := filesystem.CheckPattern(v, t.PartitionedBy); err != nil {
			return nil, &Error{Pos: t.OptionAt("partition.time-extractor.timestamp-pattern"), Msg: fmt.Sprintf("table %q: %v", t.Name, err),
				Hint: "refer to PARTITIONED BY columns as $column, e.g. '$dt $hm:00'"}
		}
		c.Extractor.Pattern = v
	}
	if v, ok := t.Options["partition.time-extractor.timestamp-formatter"]; ok {
		layout, err := filesystem.JavaLayout(v)
		if err != nil {
			return nil, bad("partition.time-extractor.timestamp-formatter", err.Error(), "e.g. 'yyyy-MM-dd HH:mm:ss' or 'yyyyMMdd'")
		}
		c.Extractor.Layout = layout
	}
	kinds, ok := t.Options["sink.partition-commit.policy.kind"]
	if !ok {
		return nil, nil
	}
	for _, k := range strings.Split(kinds, ",") {
		switch strings.TrimSpace(k) {
		case "success-file":
		case "metastore":
			return nil, bad("sink.partition-commit.policy.kind", "the 'metastore' policy needs a Hive metastore, and Weir has none",
				"use 'success-file'")
		default:
			return nil, bad("sink.partition-commit.policy.kind", fmt.Sprintf("unknown policy '%s'", strings.TrimSpace(k)),
				"use 'success-file' (a custom policy class is not supported)")
		}
	}
	return c, nil
}

// unwrapPath drops the operation and path of an *os.PathError: the
// message already quotes the 'path' option.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// source returns the source of table t.
func (c *Connectors) source(t *catalog.Table) (operator.Source, error) {
	f, ok := c.Sources[t.Connector()]
	if !ok {
		return nil, c.noConnector(t, "cannot be read", "readable connectors", keys(c.Sources))
	}
	src, err := f(t)
	return src, atTable(t, err)
}

// sink returns the sink of table t.
func (c *Connectors) sink(t *catalog.Table) (SinkSpec, error) {
	f, ok := c.Sinks[t.Connector()]
	if !ok {
		return SinkSpec{}, c.noConnector(t, "cannot be written", "writable connectors", keys(c.Sinks))
	}
	spec, err := f(t)
	return spec, atTable(t, err)
}

// noConnector is the error for a table whose connector cannot be used as
// wanted, placed at its 'connector' option. A name no connector has is
// unknown (Flink: "Could not find any factory for identifier"), with the
// nearest known name.
func (c *Connectors) noConnector(t *catalog.Table, cannot, listName, list string) error {
	name := t.Connector()
	e := &Error{Pos: t.OptionAt("connector"), Msg: fmt.Sprintf("table %q: connector '%s' %s (%s: %s)", t.Name, name, cannot, listName, list)}
	known := c.known()
	if !slices.Contains(known, name) {
		e.Msg = fmt.Sprintf("table %q: unknown connector '%s' (connectors: %s)", t.Name, name, strings.Join(known, ", "))
		if s, ok := parser.Closest(name, known); ok {
			e.Hint = fmt.Sprintf("did you mean '%s'?", s)
		}
	}
	return e
}

// known lists every connector name, sorted.
func (c *Connectors) known() []string {
	out := slices.Concat(names(c.Sources), names(c.Sinks), names(c.Lookups), names(c.KeyLookups))
	slices.Sort(out)
	return slices.Compact(out)
}

// atTable places a connector factory's error, unless it is placed already:
// at the WITH option the message names first ('fields.a.kind' = …), else
// at the table's CREATE TABLE statement.
func atTable(t *catalog.Table, err error) error {
	var placed *Error
	if err == nil || errors.As(err, &placed) && placed.Class == nil {
		return err
	}
	return &Error{Pos: t.OptionAt(firstOptionNamed(t, err.Error())), Msg: err.Error(), Err: err}
}

// firstOptionNamed is the option of t whose quoted key comes first in msg,
// or "" (OptionAt then gives the table's position).
func firstOptionNamed(t *catalog.Table, msg string) string {
	first, at := "", len(msg)
	for k := range t.Options {
		if i := strings.Index(msg, "'"+k+"'"); i >= 0 && (i < at || i == at && len(k) > len(first)) {
			first, at = k, i
		}
	}
	return first
}

func keys[V any](m map[string]V) string { return strings.Join(names(m), ", ") }

// names returns the keys of m, sorted.
func names[V any](m map[string]V) []string {
	out := slices.Collect(maps.Keys(m))
	slices.Sort(out)
	return out
}
