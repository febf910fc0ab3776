package planner

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/connector/mysqlcdc"
	"github.com/weirstream/weir/connector/nexmark"
	"github.com/weirstream/weir/connector/parquet"
	"github.com/weirstream/weir/connector/postgrescdc"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/parser"
)

// Every WITH option a connector or format does not read is an error, as in
// Flink (FactoryUtil's "Unsupported options found for …"): an option that
// is silently ignored — a typo, an option of another format, a Flink
// option Weir does not implement — would make the job do something else
// than the DDL says.

// connectorOptions are the WITH options each built-in connector reads,
// besides the options of its formats (formatOptions) and, for Kafka, its
// client properties (kafkaProperties). A connector not listed (a test's)
// is not checked.
var connectorOptions = map[string]func(t *catalog.Table) []string{
	"filesystem": fixed("connector", "path", "format", "partition.default-name", "sink.partition-commit.trigger",
		"sink.partition-commit.delay", "sink.partition-commit.watermark-time-zone", "sink.partition-commit.policy.kind",
		"sink.partition-commit.success-file.name", "partition.time-extractor.kind", "partition.time-extractor.timestamp-pattern",
		"partition.time-extractor.timestamp-formatter", "sink.rolling-policy.file-size", "sink.rolling-policy.rollover-interval",
		"sink.rolling-policy.check-interval", "sink.rolling-policy.inactivity-interval", "sink.allow-replay"),
	"print":     fixed("connector", "print-identifier", "standard-error"),
	"blackhole": fixed("connector"),
	"datagen":   datagenOptions,
	"nexmark":   func(*catalog.Table) []string { return nexmark.OptionNames() },
	"jdbc": fixed("connector", "driver", "url", "table-name", "username", "password", "sink.buffer-flush.max-rows",
		"sink.buffer-flush.interval", "sink.max-retries", "sink.delivery-guarantee", "sink.exactly-once.strategy", "sink.name",
		"sink.allow-replay", "lookup.cache", "lookup.partial-cache.max-rows", "lookup.partial-cache.expire-after-write",
		"lookup.partial-cache.expire-after-access", "lookup.partial-cache.cache-missing-key", "lookup.cache.max-rows",
		"lookup.cache.ttl", "lookup.cache.caching-missing-key", "lookup.max-retries"),
	"kafka":        fixed(kafkaKeys...),
	"upsert-kafka": fixed(append([]string{"value.fields-include"}, kafkaKeys...)...),
	"postgres-cdc": fixed(postgrescdc.OptionNames...),
	"mysql-cdc":    fixed(mysqlcdc.OptionNames...),
}

// kafkaKeys are the options of kafka and upsert-kafka tables besides
// properties.* (kafkaProperties); upsert-kafka adds value.fields-include.
var kafkaKeys = []string{"connector", "topic", "format", "value.format", "key.format", "scan.startup.mode",
	"scan.startup.timestamp-millis", "scan.bounded.mode", "scan.bad-record.policy",
	"scan.bad-record.dead-letter-topic", "sink.bad-record.policy", "sink.delivery-guarantee", "sink.transactional-id-prefix", "sink.allow-replay",
	"scan.topic-partition-discovery.interval"}

// formatOptions are the options each format reads (connector/format.New).
// Every connector that reads a format honours its 'json.ignore-parse-errors'
// or 'csv.ignore-parse-errors' (format.IgnoreParseErrors): Kafka as its
// bad-record policy, the filesystem source by skipping the line.
var formatOptions = map[string][]string{
	"json": {"json.fail-on-missing-field", "json.encode.decimal-as-plain-number", "json.ignore-parse-errors",
		"json.timestamp-format.standard"},
	"csv": {"csv.field-delimiter", "csv.write-bigdecimal-in-scientific-notation", "csv.ignore-parse-errors"},
	"raw": nil,
	"debezium-json": {"debezium-json.schema-include", "debezium-json.ignore-parse-errors",
		"debezium-json.encode.decimal-as-plain-number", "debezium-json.timestamp-format.standard"},
	"canal-json": {"canal-json.ignore-parse-errors", "canal-json.database.include", "canal-json.table.include",
		"canal-json.encode.decimal-as-plain-number", "canal-json.timestamp-format.standard"},
	"maxwell-json": {"maxwell-json.ignore-parse-errors", "maxwell-json.encode.decimal-as-plain-number",
		"maxwell-json.timestamp-format.standard"},
	"avro":                    {"avro.encoding", "avro.timestamp_mapping.legacy"},
	"avro-confluent":          format.ConfluentOptions("avro-confluent"),
	"debezium-avro-confluent": format.ConfluentOptions("debezium-avro-confluent"),
	"parquet":                 parquet.OptionNames,
}

func fixed(keys ...string) func(*catalog.Table) []string {
	return func(*catalog.Table) []string { return keys }
}

// datagenOptions: the global options and, per physical column, its
// fields.<column>.* options.
func datagenOptions(t *catalog.Table) []string {
	keys := []string{"connector", "rows-per-second", "number-of-rows", "seed"}
	for _, f := range t.Physical() {
		for _, k := range []string{"kind", "min", "max", "length", "start", "end", "max-past", "null-rate"} {
			keys = append(keys, "fields."+f.Name+"."+k)
		}
	}
	return keys
}

// supportedOptions returns the options t's connector and formats read, or
// false when the connector is not checked.
func supportedOptions(t *catalog.Table) ([]string, bool) {
	rule, ok := connectorOptions[t.Connector()]
	if !ok {
		return nil, false
	}
	keys := append([]string(nil), rule(t)...)
	seen := map[string]bool{}
	for _, k := range []string{"format", "value.format", "key.format"} {
		f := strings.ToLower(t.Options[k])
		if !slices.Contains(keys, k) || f == "" {
			continue
		}
		if !seen[f] {
			seen[f] = true
			keys = append(keys, formatOptions[f]...)
		}
		if prefix, scoped := strings.CutSuffix(k, "format"); scoped && prefix != "" {
			for _, o := range formatOptions[f] { // Flink's form: value.json.fail-on-missing-field
				keys = append(keys, prefix+o)
			}
		}
	}
	if strings.Contains(t.Connector(), "kafka") {
		for p := range kafkaProperties {
			keys = append(keys, "properties."+p)
		}
	}
	sort.Strings(keys)
	return keys, true
}

// checkOptions reports the WITH options of t that its connector and its
// formats do not read, in Flink's words, with the nearest supported option
// for each.
func checkOptions(t *catalog.Table) error {
	supported, ok := supportedOptions(t)
	if !ok {
		return nil
	}
	if err := checkFormatNames(t, supported); err != nil {
		return err
	}
	if err := misspeltRequired(t); err != nil {
		return err
	}
	var bad, notYet, hints []string
	for k := range t.Options {
		switch {
		case slices.Contains(supported, k):
		case flinkOption(t, k):
			notYet = append(notYet, k)
		default:
			bad = append(bad, k)
		}
	}
	sort.Strings(notYet)
	if len(bad) == 0 && len(notYet) > 0 {
		return &Error{Pos: t.OptionAt(notYet[0]), Msg: fmt.Sprintf("table %q: Weir does not support these options of Flink's '%s' connector yet: %s",
			t.Name, t.Connector(), strings.Join(notYet, ", ")),
			Hint: "remove them (Weir would not do what they ask); supported options: " + strings.Join(supported, ", ")}
	}
	if len(bad) == 0 {
		return nil
	}
	bad = append(bad, notYet...)
	sort.Strings(bad)
	for _, k := range bad {
		if s, ok := parser.Closest(k, supported); ok {
			hints = append(hints, fmt.Sprintf("'%s' instead of '%s'", s, k))
		}
	}
	e := &Error{Pos: t.OptionAt(bad[0]), Msg: fmt.Sprintf("table %q: Unsupported options found for '%s'. Unsupported options: %s. Supported options: %s",
		t.Name, t.Connector(), strings.Join(bad, ", "), strings.Join(supported, ", "))}
	if len(hints) > 0 {
		e.Hint = "did you mean " + strings.Join(hints, ", ") + "?"
	}
	return e
}

// requiredOptions are the options a connector cannot do without.
var requiredOptions = map[string][]string{"kafka": {"properties.bootstrap.servers", "topic"},
	"upsert-kafka": {"properties.bootstrap.servers", "topic"}, "jdbc": {"url", "table-name"}, "filesystem": {"path"}}

// misspeltRequired reports a required option that is missing while an
// option near its spelling is set: a typo of it (which would otherwise be
// refused as some other, unsupported option).
func misspeltRequired(t *catalog.Table) error {
	for _, r := range requiredOptions[t.Connector()] {
		if _, set := t.Options[r]; set {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(t.Options)) {
			if _, near := parser.Closest(k, []string{r}); near {
				return &Error{Pos: t.OptionAt(k), Msg: fmt.Sprintf("table %q: the '%s' connector needs '%s'", t.Name, t.Connector(), r),
					Hint: fmt.Sprintf("did you mean '%s' instead of '%s'?", r, k)}
			}
		}
	}
	return nil
}

// checkFormatNames refuses an unknown format at the option that names it
// (of the format options the connector reads: supported).
func checkFormatNames(t *catalog.Table, supported []string) error {
	var known []string
	for f := range formatOptions {
		if f != "parquet" || t.Connector() == "filesystem" {
			known = append(known, f)
		}
	}
	sort.Strings(known)
	for _, k := range []string{"format", "value.format", "key.format"} {
		name, set := t.Options[k]
		if !set || !slices.Contains(supported, k) || slices.Contains(known, strings.ToLower(name)) {
			continue
		}
		e := &Error{Pos: t.OptionAt(k), Msg: fmt.Sprintf("table %q: unknown format '%s' in '%s'; supported formats: %s",
			t.Name, name, k, strings.Join(known, ", "))}
		if s, ok := parser.Closest(name, known); ok {
			e.Hint = fmt.Sprintf("did you mean '%s'?", s)
		}
		return e
	}
	return nil
}

// flinkNotYet are options of Flink's connectors and formats that Weir does
// not implement: refused with a message that says so, not as a typo.
var flinkNotYet = map[string][]string{
	"kafka": {"key.fields", "key.fields-prefix", "value.fields-include", "topic-pattern", "scan.startup.specific-offsets",
		"scan.bounded.specific-offsets", "scan.bounded.timestamp-millis", "sink.partitioner", "sink.parallelism",
		"properties.group.instance.id"},
	"upsert-kafka": {"key.fields-prefix", "sink.parallelism", "sink.buffer-flush.max-rows", "sink.buffer-flush.interval"},
	"jdbc": {"connection.max-retry-timeout", "scan.fetch-size",
		"scan.auto-commit", "scan.partition.column", "scan.partition.num", "scan.partition.lower-bound",
		"scan.partition.upper-bound", "sink.parallelism"},
	"filesystem": {"auto-compaction",
		"compaction.file-size", "source.monitor-interval", "sink.parallelism", "source.path.regex-pattern"},
	"print": {"sink.parallelism"},
	"postgres-cdc": {"scan.incremental.snapshot.enabled", "scan.incremental.snapshot.chunk.size", "scan.snapshot.fetch.size",
		"changelog-mode", "heartbeat.interval", "connect.timeout", "connect.max-retries", "connection.pool.size",
		"scan.incremental.close-idle-reader.enabled", "scan.lsn-commit.checkpoints-num-delay", "chunk-meta.group.size",
		"chunk-key.even-distribution.factor.upper-bound", "chunk-key.even-distribution.factor.lower-bound",
		"scan.newly-added-table.enabled", "scan.startup.timestamp-millis", "scan.incremental.snapshot.chunk.key-column"},
	"mysql-cdc": mysqlcdc.FlinkNotYet,
	"blackhole": {},
	"datagen":   {},
	"json": {"json.map-null-key.mode", "json.map-null-key.literal",
		"json.encode.ignore-null-fields", "json.decode.json-parser.enabled"},
	"csv": {"csv.allow-comments", "csv.quote-character", "csv.disable-quote-character",
		"csv.array-element-delimiter", "csv.escape-character", "csv.null-literal"},
	"debezium-json":           {"debezium-json.map-null-key.mode", "debezium-json.map-null-key.literal"},
	"canal-json":              {"canal-json.map-null-key.mode", "canal-json.map-null-key.literal"},
	"maxwell-json":            {"maxwell-json.map-null-key.mode", "maxwell-json.map-null-key.literal"},
	"avro":                    {"avro.codec"},
	"avro-confluent":          confluentNotYet("avro-confluent"),
	"debezium-avro-confluent": confluentNotYet("debezium-avro-confluent"),
}

// confluentNotYet are the options of Flink's registry formats Weir does not
// implement: the registry's TLS and client properties.
func confluentNotYet(name string) []string {
	var out []string
	for _, o := range []string{"properties", "ssl.keystore.location", "ssl.keystore.password", "ssl.truststore.location",
		"ssl.truststore.password"} {
		out = append(out, name+"."+o)
	}
	return out
}

// formatsWithOptions are the formats whose Flink options flinkNotYet lists.
var formatsWithOptions = []string{"json", "csv", "debezium-json", "canal-json", "maxwell-json", "avro", "avro-confluent",
	"debezium-avro-confluent"}

// flinkOption tells whether k is an option Flink's version of t's
// connector, or of one of its formats, reads and Weir does not: any Kafka
// client property ('properties.*'), datagen's 'fields.<col>.var-len', and
// the lists of flinkNotYet (format options also with a key./value. prefix).
func flinkOption(t *catalog.Table, k string) bool {
	c := t.Connector()
	if strings.Contains(c, "kafka") && strings.HasPrefix(k, "properties.") {
		return true
	}
	if strings.HasSuffix(c, "-cdc") && strings.HasPrefix(k, "debezium.") {
		return true
	}
	if c == "datagen" && strings.HasPrefix(k, "fields.") && strings.HasSuffix(k, ".var-len") {
		return true
	}
	if slices.Contains(flinkNotYet[c], k) {
		return true
	}
	plain := strings.TrimPrefix(strings.TrimPrefix(k, "value."), "key.")
	for _, f := range formatsWithOptions {
		if slices.Contains(flinkNotYet[f], plain) {
			return true
		}
	}
	return false
}
