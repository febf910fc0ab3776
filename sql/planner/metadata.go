package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// MetadataKey is a metadata key a connector reads (and maybe writes), as
// Flink's SupportsReadingMetadata/SupportsWritingMetadata list them: a
// `col type METADATA FROM 'key'` column reads it.
type MetadataKey struct {
	Key      string
	Type     types.Type
	Writable bool
}

// MetadataFactory lists the metadata keys of a table's connector (and
// format: a Kafka table in debezium-json adds the format's keys, prefixed
// 'value.'), in Flink's order.
type MetadataFactory func(t *catalog.Table) []MetadataKey

// tableMeta is a table's metadata columns, checked against its connector.
type tableMeta struct {
	cols []*parser.ColumnDef // the metadata columns, in order
	keys []MetadataKey       // each column's key
}

// metadataOf checks t's metadata columns against what its connector
// reads: every key must be known, and each column's type castable from
// the key's. The error names the key, the column's position and the keys
// there are.
func (p *Planner) metadataOf(t *catalog.Table) (*tableMeta, error) {
	m := &tableMeta{}
	for _, c := range t.Columns {
		if c.Kind == parser.MetadataColumn {
			m.cols = append(m.cols, c)
		}
	}
	if len(m.cols) == 0 {
		return m, nil
	}
	var avail []MetadataKey
	if f := p.Connectors.Metadata[t.Connector()]; f != nil {
		avail = f(t)
	}
	for _, c := range m.cols {
		k, err := metadataKeyOf(t, c, avail, "reading")
		if err != nil {
			return nil, err
		}
		if _, err := expr.CastTo(fieldRef(0, k.Type), c.Type, nil); err != nil {
			return nil, errAt(c.Pos, "metadata column %s of table %q cannot be declared %s: the type of metadata key '%s' is %s, which does not cast to it",
				c.Name, t.Name, c.Type, k.Key, k.Type)
		}
		m.keys = append(m.keys, k)
	}
	return m, nil
}

// MetaKey is a metadata column's key: its FROM 'key', else its name.
func metaKey(c *parser.ColumnDef) string {
	if c.MetadataKey != "" {
		return c.MetadataKey
	}
	return c.Name
}

func metadataKeyOf(t *catalog.Table, c *parser.ColumnDef, avail []MetadataKey, purpose string) (MetadataKey, error) {
	key := metaKey(c)
	var names []string
	for _, k := range avail {
		if purpose == "writing" && !k.Writable {
			continue
		}
		if k.Key == key {
			return k, nil
		}
		names = append(names, k.Key)
	}
	if len(names) == 0 {
		return MetadataKey{}, &Error{Pos: c.Pos, Msg: fmt.Sprintf("invalid metadata key '%s' in column %s of table %q: connector '%s' supports no metadata keys for %s",
			key, c.Name, t.Name, t.Connector(), purpose)}
	}
	e := &Error{Pos: c.Pos, Msg: fmt.Sprintf("invalid metadata key '%s' in column %s of table %q: connector '%s' supports these metadata keys for %s: %s",
		key, c.Name, t.Name, t.Connector(), purpose, strings.Join(names, ", "))}
	if purpose == "writing" && slices.ContainsFunc(avail, func(k MetadataKey) bool { return k.Key == key }) {
		e.Hint = fmt.Sprintf("'%s' is read-only: declare the column VIRTUAL to leave it out of INSERT INTO", key)
	} else if s, ok := parser.Closest(key, names); ok {
		e.Hint = fmt.Sprintf("did you mean '%s'?", s)
	}
	return MetadataKey{}, e
}

// writtenMetadata checks the metadata columns an INSERT into t writes
// (the non-VIRTUAL ones) against what its connector writes.
func (p *Planner) writtenMetadata(t *catalog.Table) ([]MetadataKey, error) {
	var avail []MetadataKey
	if f := p.Connectors.Metadata[t.Connector()]; f != nil {
		avail = f(t)
	}
	var out []MetadataKey
	for _, c := range t.WrittenMetadata() {
		k, err := metadataKeyOf(t, c, avail, "writing")
		if err != nil {
			return nil, err
		}
		if _, err := expr.CastTo(fieldRef(0, c.Type), k.Type, nil); err != nil {
			return nil, errAt(c.Pos, "metadata column %s of table %q cannot be declared %s: metadata key '%s' takes %s, to which it does not cast",
				c.Name, t.Name, c.Type, k.Key, k.Type)
		}
		out = append(out, k)
	}
	return out, nil
}

// notNull returns t marked NOT NULL.
func notNull(t types.Type) types.Type { t.Nullable = false; return t }
