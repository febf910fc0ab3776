package planner

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/weirstream/weir/connector/blackhole"
	"github.com/weirstream/weir/connector/datagen"
	"github.com/weirstream/weir/connector/filesystem"
	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/connector/nexmark"
	"github.com/weirstream/weir/connector/print"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/types"
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
// table's physical columns, in order.
type SourceFactory func(t *catalog.Table) (operator.Source, error)

// SinkFactory builds a sink taking event.Row values with the table's
// physical columns.
type SinkFactory func(t *catalog.Table) (SinkSpec, error)

// LookupFactory returns the loader of a table that lookup joins read
// (JOIN t FOR SYSTEM_TIME AS OF …): it returns every row of the table's
// physical columns, and is called once per join subtask when it opens.
type LookupFactory func(t *catalog.Table) (func() ([][]any, error), error)

// Connectors maps 'connector' option values to factories.
type Connectors struct {
	Sources map[string]SourceFactory
	Sinks   map[string]SinkFactory
	// Lookups are the connectors whose tables a lookup join can read.
	Lookups map[string]LookupFactory
	// Updating names the connectors whose sources emit a changelog
	// (upsert-kafka) rather than inserts only.
	Updating map[string]bool
}

// BuiltinConnectors returns the connectors that need no external system:
// datagen, print, blackhole and filesystem. Kafka and JDBC are added by
// RegisterExternal.
func BuiltinConnectors() *Connectors {
	c := &Connectors{Sources: map[string]SourceFactory{}, Sinks: map[string]SinkFactory{}, Updating: map[string]bool{}}
	c.Sources["datagen"] = func(t *catalog.Table) (operator.Source, error) {
		return datagen.FromOptions(t.Physical(), t.Options)
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
		return mappedSource{Source: src, toRow: func(v any) []any { return v.(nexmark.Event).Row() }}, nil
	}
	c.Sources["filesystem"] = fileSource
	c.Sinks["filesystem"] = fileSink
	c.Lookups = map[string]LookupFactory{"filesystem": fileLookup}
	return c
}

func fileFormat(t *catalog.Table) (format.Format, string, error) {
	path := strings.TrimPrefix(t.Options["path"], "file://")
	if path == "" {
		return nil, "", fmt.Errorf("table %q: the filesystem connector needs a 'path' option", t.Name)
	}
	f, err := format.New(t.Options["format"], t.Physical(), t.Options)
	if err != nil {
		return nil, "", fmt.Errorf("table %q: %w", t.Name, err)
	}
	return f, path, nil
}

func fileSource(t *catalog.Table) (operator.Source, error) {
	f, path, err := fileFormat(t)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("table %q: %w", t.Name, err)
	}
	return &filesystem.Source{Path: path, Format: f}, nil
}

func fileSink(t *catalog.Table) (SinkSpec, error) {
	f, path, err := fileFormat(t)
	return SinkSpec{Sink: &filesystem.Sink{Dir: path, Format: f}}, err
}

// source returns the source of table t.
func (c *Connectors) source(t *catalog.Table) (operator.Source, error) {
	f, ok := c.Sources[t.Connector()]
	if !ok {
		return nil, fmt.Errorf("table %q: connector %q cannot be read (readable connectors: %s)",
			t.Name, t.Connector(), keys(c.Sources))
	}
	return f(t)
}

// sink returns the sink of table t.
func (c *Connectors) sink(t *catalog.Table) (SinkSpec, error) {
	f, ok := c.Sinks[t.Connector()]
	if !ok {
		return SinkSpec{}, fmt.Errorf("table %q: connector %q cannot be written (writable connectors: %s)",
			t.Name, t.Connector(), keys(c.Sinks))
	}
	return f(t)
}

func keys[V any](m map[string]V) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
