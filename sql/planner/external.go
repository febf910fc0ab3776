package planner

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/connector/cdc"
	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/connector/jdbc"
	"github.com/weirstream/weir/connector/kafka"
	"github.com/weirstream/weir/connector/mysqlcdc"
	"github.com/weirstream/weir/connector/postgrescdc"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/types"
)

// RegisterExternal adds the connectors of external systems: kafka,
// upsert-kafka and jdbc, with Flink's option names. checkpointInterval (read
// when a job is planned) lets the Kafka exactly-once sink check its
// transaction timeout against the job's checkpoint interval.
func RegisterExternal(c *Connectors, checkpointInterval func() time.Duration) {
	c.Sources["kafka"] = kafkaSource
	c.Sources["upsert-kafka"] = upsertKafkaSource
	if c.Updating != nil {
		c.Updating["upsert-kafka"] = true
	}
	c.Sinks["kafka"] = func(t *catalog.Table) (SinkSpec, error) { return kafkaSink(t, checkpointInterval()) }
	c.Sinks["upsert-kafka"] = func(t *catalog.Table) (SinkSpec, error) { return upsertKafkaSink(t, checkpointInterval()) }
	c.Sinks["jdbc"] = jdbcSink
	if c.KeyLookups == nil {
		c.KeyLookups = map[string]KeyLookupFactory{}
	}
	c.KeyLookups["jdbc"] = jdbcLookup
	if c.Metadata != nil {
		c.Metadata["kafka"] = kafkaMetadata
		// Flink's upsert-kafka is its kafka connector in upsert mode: the
		// same metadata keys, read and written alike.
		c.Metadata["upsert-kafka"] = kafkaMetadata
	}
	c.Sources["postgres-cdc"] = postgresCDCSource
	c.Sources["mysql-cdc"] = mysqlCDCSource
	if c.Updating != nil {
		c.Updating["postgres-cdc"] = true
		c.Updating["mysql-cdc"] = true
	}
}

// mysqlCDCSource reads a MySQL/MariaDB table as a changelog (Flink CDC's
// mysql-cdc): its snapshot split by primary-key ranges, then its binlog.
func mysqlCDCSource(t *catalog.Table) (operator.Source, error) {
	if err := checkOptions(t); err != nil {
		return nil, err
	}
	o, err := mysqlcdc.FromMap(t.Options, t.Name, t.Physical(), t.PrimaryKey)
	if err != nil {
		return nil, cdcOptionError(t, err)
	}
	s, err := mysqlcdc.NewSource(o)
	if err != nil {
		return nil, cdcOptionError(t, err)
	}
	return s, nil
}

// postgresCDCSource reads a PostgreSQL table as a changelog (Flink CDC's
// postgres-cdc): its snapshot, then its changes through a logical
// replication slot.
func postgresCDCSource(t *catalog.Table) (operator.Source, error) {
	if err := checkOptions(t); err != nil {
		return nil, err
	}
	o, err := postgrescdc.FromMap(t.Options, t.Name, t.Physical(), t.PrimaryKey)
	if err != nil {
		return nil, cdcOptionError(t, err)
	}
	s, err := postgrescdc.NewSource(o)
	if err != nil {
		return nil, cdcOptionError(t, err)
	}
	return s, nil
}

// cdcOptionError places a CDC connector's option error at its option in
// the DDL (the PRIMARY KEY's at the table).
func cdcOptionError(t *catalog.Table, err error) error {
	var oe *cdc.OptionError
	if !errors.As(err, &oe) {
		return err
	}
	pos := t.Pos
	if oe.Option != "PRIMARY KEY" {
		pos = t.OptionAt(oe.Option)
	}
	return &Error{Pos: pos, Msg: err.Error(), Err: err}
}

// kafkaProperties maps the supported properties.* keys (Kafka's client
// property names); any other properties.* key is an error, not ignored.
var kafkaProperties = map[string]bool{"bootstrap.servers": true, "group.id": true, "isolation.level": true,
	"transaction.timeout.ms": true, "max.request.size": true, "auto.offset.reset": true, "compression.type": true}

// checkKafkaOptions checks the options of a kafka or upsert-kafka table
// (the planner checks them at every use too; a factory can be called on
// its own).
func checkKafkaOptions(t *catalog.Table) error {
	if err := checkOptions(t); err != nil {
		return err
	}
	if t.Options["properties.bootstrap.servers"] == "" {
		return fmt.Errorf("table %q: the %s connector needs 'properties.bootstrap.servers'", t.Name, t.Connector())
	}
	if err := checkBootstrapServers(t); err != nil {
		return err
	}
	if t.Options["topic"] == "" {
		return fmt.Errorf("table %q: the %s connector needs 'topic'", t.Name, t.Connector())
	}
	return nil
}

// checkBootstrapServers refuses a broker address that is not host:port
// here, at its option, rather than when the job's first client starts.
func checkBootstrapServers(t *catalog.Table) error {
	v := t.Options["properties.bootstrap.servers"]
	for _, addr := range strings.Split(v, ",") {
		addr = strings.TrimSpace(addr)
		_, port, err := net.SplitHostPort(addr)
		if err == nil {
			_, err = strconv.ParseUint(port, 10, 16)
		}
		if err != nil {
			return &Error{Pos: t.OptionAt("properties.bootstrap.servers"),
				Msg:  fmt.Sprintf("table %q: 'properties.bootstrap.servers' = '%s': %q is not host:port", t.Name, v, addr),
				Hint: "list brokers as 'host:port', comma-separated, e.g. 'localhost:9092'"}
		}
	}
	return nil
}

func valueFormat(t *catalog.Table) (format.Format, error) {
	name := t.Options["value.format"]
	if name == "" {
		name = t.Options["format"]
	}
	if name == "" {
		return nil, fmt.Errorf("table %q: set 'format' (json, csv, raw, avro, avro-confluent, debezium-json, canal-json or maxwell-json)", t.Name)
	}
	f, err := format.New(name, t.Physical(), withSubject(t, name, formatScope(t, "value.format", "value."), "-value"))
	if err != nil {
		return nil, fmt.Errorf("table %q: %w", t.Name, err)
	}
	return f, nil
}

// withSubject gives the avro-confluent format Flink's default subject on
// a Kafka table: '<topic>-value' for the value, '<topic>-key' for the key,
// when 'avro-confluent.subject' is not set.
func withSubject(t *catalog.Table, formatName string, opts map[string]string, suffix string) map[string]string {
	name := strings.ToLower(formatName)
	key := name + ".subject"
	if (name != "avro-confluent" && name != "debezium-avro-confluent") || opts[key] != "" || t.Options["topic"] == "" {
		return opts
	}
	out := make(map[string]string, len(opts)+1)
	for k, v := range opts {
		out[k] = v
	}
	out[key] = t.Options["topic"] + suffix
	return out
}

// formatScope returns t's options with those of one format's scope made
// plain: when 'value.format' (or 'key.format') names the format, Flink
// writes its options with a 'value.' ('key.') prefix —
// 'value.json.fail-on-missing-field'. The unprefixed form is kept as well.
func formatScope(t *catalog.Table, formatKey, prefix string) map[string]string {
	if t.Options[formatKey] == "" {
		return t.Options
	}
	out := make(map[string]string, len(t.Options))
	for k, v := range t.Options {
		out[k] = v
	}
	for k, v := range t.Options {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "format" && rest != "fields-include" {
			out[rest] = v
		}
	}
	return out
}

func kafkaSource(t *catalog.Table) (operator.Source, error) {
	if err := checkKafkaOptions(t); err != nil {
		return nil, err
	}
	dec, err := kafkaDeserializer(t)
	if err != nil {
		return nil, err
	}
	opts, err := kafkaScanOptions(t)
	if err != nil {
		return nil, err
	}
	s, err := kafka.NewSource[event.Row](append(opts, dec)...)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// kafkaDeserializer reads a record's value in the table's format: one +I
// row, or in a changelog format the message's rows with their kinds.
func kafkaDeserializer(t *catalog.Table) (kafka.SourceOption, error) {
	if name := valueFormatName(t); format.IsChangelog(name) {
		c, err := changelogFormat(t, name)
		if err != nil {
			return nil, err
		}
		if meta := kafkaMetaReaders(t); meta != nil {
			return kafka.MultiMessageDeserializer(func(m kafka.Message) ([]event.Row, error) {
				rows, err := c.DecodeChanges(m.Value)
				for i := range rows {
					rows[i].Fields = withMeta(rows[i].Fields, meta, m)
				}
				return rows, err
			}), nil
		}
		return kafka.MultiDeserializer(c.DecodeChanges), nil
	}
	f, err := valueFormat(t)
	if err != nil {
		return nil, err
	}
	if meta := kafkaMetaReaders(t); meta != nil {
		return kafka.MessageDeserializer(func(m kafka.Message) (event.Row, error) {
			fields, err := f.Decode(m.Value)
			return event.Row{Kind: event.Insert, Fields: withMeta(fields, meta, m)}, err
		}), nil
	}
	return kafka.Deserializer(func(b []byte) (event.Row, error) {
		fields, err := f.Decode(b)
		return event.Row{Kind: event.Insert, Fields: fields}, err
	}), nil
}

// changelogFormat is the table's changelog format name (its 'format' or
// 'value.format').
func changelogFormat(t *catalog.Table, name string) (format.Changelog, error) {
	c, err := format.NewChangelog(name, t.Physical(), withSubject(t, name, formatScope(t, "value.format", "value."), "-value"))
	if err != nil {
		return nil, fmt.Errorf("table %q: %w", t.Name, err)
	}
	return c, nil
}

// kafkaScanOptions are the source options of a kafka or upsert-kafka
// table: the connector reads its WITH options (kafka.SourceOptionsFromMap);
// the planner adds the topics, the format's ignore-parse-errors (which
// skips bad records when 'scan.bad-record.policy' is not set otherwise)
// and the advice of a bad record error, in the table's terms.
func kafkaScanOptions(t *catalog.Table) ([]kafka.SourceOption, error) {
	opts, err := kafka.SourceOptionsFromMap(t.Options)
	if err != nil {
		return nil, tableErr(t, err)
	}
	opts = append(opts, kafka.Topics(strings.Split(t.Options["topic"], ";")...), kafka.BadRecordFix(badRecordFix(t)))
	if p := t.Options["scan.bad-record.policy"]; p == "" || p == "fail" {
		skip, err := ignoreParseErrors(t)
		if skip {
			opts = append(opts, kafka.BadRecords(kafka.SkipBadRecords()))
		}
		return opts, err
	}
	return opts, nil
}

// badRecordFix is the advice of a bad record error in SQL: the table's
// options, not the Go API's.
func badRecordFix(t *catalog.Table) string {
	fix := fmt.Sprintf("set 'scan.bad-record.policy' = 'skip', or 'dead-letter' with 'scan.bad-record.dead-letter-topic', on table %q", t.Name)
	if f := strings.ToLower(valueFormatName(t)); format.HasIgnoreParseErrors(f) {
		fix += fmt.Sprintf(" ('%s.ignore-parse-errors' = 'true' skips too)", f)
	}
	return fix
}

// ignoreParseErrors reads the 'json.ignore-parse-errors' or
// 'csv.ignore-parse-errors' of t's value format (also written
// 'value.json.ignore-parse-errors') or key format.
func ignoreParseErrors(t *catalog.Table) (bool, error) {
	value := t.Options["value.format"]
	if value == "" {
		value = t.Options["format"]
	}
	skip, err := format.IgnoreParseErrors(value, formatScope(t, "value.format", "value."))
	if err != nil || skip || t.Options["key.format"] == "" {
		return skip, tableErr(t, err)
	}
	skip, err = format.IgnoreParseErrors(t.Options["key.format"], formatScope(t, "key.format", "key."))
	return skip, tableErr(t, err)
}

// tableErr prefixes err, when set, with the table's name.
func tableErr(t *catalog.Table, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("table %q: %w", t.Name, err)
}

// kafkaSinkOptions are the sink options of a kafka or upsert-kafka table:
// the connector reads its WITH options (kafka.SinkOptionsFromMap); the
// planner adds the job's checkpoint interval and the advice of a bad record
// error, in the table's terms.
func kafkaSinkOptions(t *catalog.Table, interval time.Duration) ([]kafka.SinkOption, error) {
	opts, err := kafka.SinkOptionsFromMap(t.Options)
	if err != nil {
		return nil, tableErr(t, err)
	}
	if interval > 0 {
		opts = append(opts, kafka.CheckpointInterval(interval))
	}
	// The advice of a bad record error names the table's WITH options.
	return append(opts,
		kafka.MaxRequestSizeFix(fmt.Sprintf("'properties.max.request.size' on table %q", t.Name)),
		kafka.BadRecordFix(fmt.Sprintf("set 'sink.bad-record.policy' = 'skip' on table %q", t.Name))), nil
}

func kafkaSink(t *catalog.Table, interval time.Duration) (SinkSpec, error) {
	if err := checkKafkaOptions(t); err != nil {
		return SinkSpec{}, err
	}
	opts, err := kafkaSinkOptions(t, interval)
	if err != nil {
		return SinkSpec{}, err
	}
	if st := kafkaStamp(t); st != nil {
		opts = append(opts, st)
	}
	if name := valueFormatName(t); format.IsChangelog(name) {
		return changelogKafkaSink(t, name, opts)
	}
	f, err := valueFormat(t)
	if err != nil {
		return SinkSpec{}, err
	}
	nphys := len(t.Physical())
	opts = append(opts, kafka.Serializer(func(r event.Row) ([]byte, error) {
		if r.Kind != event.Insert {
			// The planner rejects updating queries into this sink, but it
			// still plans every scan as insert-only, so an upsert-kafka
			// table copied here arrives with -U/+U/-D rows: refuse them
			// rather than write a retraction as if it were a row.
			return nil, fmt.Errorf("table %q: the 'kafka' connector takes inserts only, got a %s row; write changelogs to 'upsert-kafka'", t.Name, r.Kind)
		}
		return f.Encode(r.Fields[:nphys])
	}))
	s, err := kafka.NewSink[event.Row](opts...)
	return SinkSpec{Sink: s}, err
}

// changelogKafkaSink writes every row, of any kind, as a message of the
// changelog format (Flink's kafka sink with debezium-json: -U and -D as
// deletes): the sink takes updating queries, and needs no key.
func changelogKafkaSink(t *catalog.Table, name string, opts []kafka.SinkOption) (SinkSpec, error) {
	c, err := changelogFormat(t, name)
	if err != nil {
		return SinkSpec{}, err
	}
	nphys := len(t.Physical())
	s, err := kafka.NewSink[event.Row](append(opts, kafka.Serializer(func(r event.Row) ([]byte, error) {
		r.Fields = r.Fields[:nphys]
		return c.EncodeChange(r)
	}))...)
	return SinkSpec{Sink: s, AcceptsUpdates: true}, err
}

func upsertKafkaSink(t *catalog.Table, interval time.Duration) (SinkSpec, error) {
	l, err := upsertLayoutOf(t)
	if err != nil {
		return SinkSpec{}, err
	}
	opts, err := kafkaSinkOptions(t, interval)
	if err != nil {
		return SinkSpec{}, err
	}
	if st := kafkaStamp(t); st != nil {
		opts = append(opts, st)
	}
	s, err := kafka.NewUpsertSink(l.encodeKey, l.encodeValue, opts...)
	return SinkSpec{Sink: s, AcceptsUpdates: true, NeedsKey: true}, err
}

// upsertKafkaSource reads an upsert topic back as a changelog (Flink's
// upsert-kafka source with its ChangelogNormalize): +I for a key's first
// value, -U/+U for a change, -D (the whole old row) for a tombstone. The
// source keeps each partition's last value per key in its checkpointed
// split state (see kafka.NewUpsertSource). The topic is always read from
// its earliest offset, as in Flink: starting later would miss the values
// that later records update.
func upsertKafkaSource(t *catalog.Table) (operator.Source, error) {
	l, err := upsertLayoutOf(t)
	if err != nil {
		return nil, err
	}
	if m := t.Options["scan.startup.mode"]; m != "" && m != "earliest-offset" {
		return nil, fmt.Errorf("table %q: upsert-kafka reads the topic from the earliest offset (every key's last value is needed), "+
			"so 'scan.startup.mode' = '%s' is not supported: remove the option", t.Name, m)
	}
	opts, err := kafkaScanOptions(t)
	if err != nil {
		return nil, err
	}
	var s *kafka.Source[event.Row]
	if meta := kafkaMetaReaders(t); meta != nil {
		s, err = kafka.NewUpsertMessageSource(func(m kafka.Message) ([]any, error) {
			row, err := l.decode(m.Key, m.Value)
			return withMeta(row, meta, m), err
		}, opts...)
	} else {
		s, err = kafka.NewUpsertSource(l.decode, opts...)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// upsertLayout maps a table's physical row onto an upsert record: the key
// holds the PRIMARY KEY columns in 'key.format' (default json); the value
// holds every column ('value.fields-include' = 'ALL', the default) or the
// others ('EXCEPT_KEY') in 'value.format'.
type upsertLayout struct {
	key, value     format.Format
	keyIdx, valIdx []int // positions of the key and value fields in the row
	width          int
}

func upsertLayoutOf(t *catalog.Table) (*upsertLayout, error) {
	if err := checkKafkaOptions(t); err != nil {
		return nil, err
	}
	if len(t.PrimaryKey) == 0 {
		return nil, fmt.Errorf("table %q: upsert-kafka needs a PRIMARY KEY (…) NOT ENFORCED: it is the record key", t.Name)
	}
	phys := t.Physical()
	l := &upsertLayout{width: len(phys)}
	var keyFields, valFields []types.Field
	exceptKey, err := exceptKey(t)
	if err != nil {
		return nil, err
	}
	for i, f := range phys {
		isKey := indexOf(t.PrimaryKey, f.Name) >= 0
		if isKey {
			l.keyIdx, keyFields = append(l.keyIdx, i), append(keyFields, f)
		}
		if !isKey || !exceptKey {
			l.valIdx, valFields = append(l.valIdx, i), append(valFields, f)
		}
	}
	name := t.Options["key.format"]
	if name == "" {
		name = "json"
	}
	for _, f := range []string{name, valueFormatName(t)} {
		if format.IsChangelog(f) {
			return nil, fmt.Errorf("table %q: upsert-kafka reads and writes rows by key in an insert-only format (json, csv, raw), "+
				"not '%s', whose messages carry their own changes: read and write such a topic with the 'kafka' connector", t.Name, f)
		}
	}
	if l.key, err = format.New(name, keyFields, withSubject(t, name, formatScope(t, "key.format", "key."), "-key")); err != nil {
		return nil, fmt.Errorf("table %q: key.format: %w", t.Name, err)
	}
	if len(valFields) == 0 {
		return nil, fmt.Errorf("table %q: 'value.fields-include' = 'EXCEPT_KEY' leaves no value column", t.Name)
	}
	vf := valueFormatName(t)
	if vf == "" {
		return nil, fmt.Errorf("table %q: set 'value.format' (json, csv or raw)", t.Name)
	}
	if l.value, err = format.New(vf, valFields, withSubject(t, vf, formatScope(t, "value.format", "value."), "-value")); err != nil {
		return nil, fmt.Errorf("table %q: value.format: %w", t.Name, err)
	}
	return l, nil
}

func valueFormatName(t *catalog.Table) string {
	if n := t.Options["value.format"]; n != "" {
		return n
	}
	return t.Options["format"]
}

func exceptKey(t *catalog.Table) (bool, error) {
	switch v := t.Options["value.fields-include"]; strings.ToUpper(v) {
	case "", "ALL":
		return false, nil
	case "EXCEPT_KEY":
		return true, nil
	default:
		return false, fmt.Errorf("table %q: 'value.fields-include' = '%s': want ALL or EXCEPT_KEY", t.Name, v)
	}
}

func pick(fields []any, idx []int) []any {
	out := make([]any, len(idx))
	for i, j := range idx {
		out[i] = fields[j]
	}
	return out
}

func (l *upsertLayout) encodeKey(r event.Row) ([]byte, error) {
	return l.key.Encode(pick(r.Fields, l.keyIdx))
}

func (l *upsertLayout) encodeValue(r event.Row) ([]byte, error) {
	if len(l.valIdx) == l.width {
		return l.value.Encode(r.Fields)
	}
	return l.value.Encode(pick(r.Fields, l.valIdx))
}

// decode reads a record with a value into the physical row; with
// EXCEPT_KEY the key columns come from the key.
func (l *upsertLayout) decode(key, value []byte) ([]any, error) {
	vals, err := l.value.Decode(value)
	if err != nil || len(l.valIdx) == l.width {
		return vals, err
	}
	keys, err := l.key.Decode(key)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	row := make([]any, l.width)
	for i, j := range l.keyIdx {
		row[j] = keys[i]
	}
	for i, j := range l.valIdx {
		row[j] = vals[i]
	}
	return row, nil
}

func jdbcSink(t *catalog.Table) (SinkSpec, error) {
	m := map[string]string{}
	for k, v := range t.Options {
		m[k] = v
	}
	var names []string
	for _, f := range t.Physical() {
		names = append(names, f.Name)
	}
	opts := []jdbc.Opt{jdbc.Columns(names...)}
	if len(t.PrimaryKey) > 0 {
		opts = append(opts, jdbc.PrimaryKey(t.PrimaryKey...))
	}
	if m["sink.name"] == "" {
		m["sink.name"] = t.Name
	}
	s, err := jdbc.FromMap(m, opts...)
	if err != nil {
		return SinkSpec{}, fmt.Errorf("table %q: %w", t.Name, err)
	}
	return SinkSpec{Sink: s, AcceptsUpdates: len(t.PrimaryKey) > 0, NeedsKey: true}, nil
}
