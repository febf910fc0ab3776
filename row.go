package weir

import "github.com/weirstream/weir/event"

// Row is a changelog row, a RowKind and positional field values (Flink's
// RowData with its RowKind): what table sinks such as the JDBC sink write,
// and formatted sources read. It prints as Flink's print connector does:
// "+I[1, a]".
type Row = event.Row

// RowKind is the change a Row describes: Insert (+I), UpdateBefore (-U),
// UpdateAfter (+U) or Delete (-D). An upsert sink writes Insert and
// UpdateAfter rows as upserts by the table's key and Delete rows as deletes.
type RowKind = event.RowKind

// The row kinds, Flink's.
const (
	Insert       = event.Insert
	UpdateBefore = event.UpdateBefore
	UpdateAfter  = event.UpdateAfter
	Delete       = event.Delete
)
